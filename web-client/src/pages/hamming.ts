/** Hamming distance between iris codes: the server's enrolled code against the one you draw. */
import { h } from '../dom';
import { ENROLLED_IRIS_HEX } from '../demo-values';
import { BITS, fromHex, IrisEditor, lockedIris, randomIris, rescan, toHex, type IrisBits } from '../iris';
import { choice, describeService, header, resultValue, type Page } from '../page';
import { Protection } from '../protection';
import { RunPanel } from '../run-panel';

type Mode = 'hamming' | 'hamming_threshold';

/** Bits a re-scan of the same eye gets wrong: real iris re-scans differ in about 10–25 %. */
const RESCAN_NOISE = 0.12;

function mount(root: HTMLElement): void {
  let mode: Mode = 'hamming';
  const enrolled = fromHex(ENROLLED_IRIS_HEX)!;
  const hexField = h('textarea', { class: 'hex', rows: 4, spellcheck: 'false', 'data-testid': 'iris-hex', 'aria-label': 'your iris code as hex' });
  const hexNote = h('p', { class: 'hint' }, `${BITS} bits as one hex integer; bit i is ring ⌊i/60⌋, angle i mod 60.`);
  const update = (code: IrisBits) => {
    hexField.value = toHex(code);
    hexField.classList.remove('invalid');
  };
  const editor = new IrisEditor(rescan(enrolled, RESCAN_NOISE), update);
  const setCode = (code: IrisBits) => {
    editor.set(code);
    update(code);
  };
  hexField.addEventListener('input', () => {
    const code = fromHex(hexField.value);
    hexField.classList.toggle('invalid', !code);
    if (code) editor.set(code);
  });
  update(editor.bits);

  const roles = h('div');
  const protection = new Protection();
  const panel = new RunPanel({
    label: 'Compare privately',
    prepare: () => {
      if (!fromHex(hexField.value)) throw new Error(`Your iris code must be a ${BITS}-bit hex integer (up to 225 hex digits).`);
      return { service: mode, inputs: editor.bits, security: protection.security };
    },
    show: (result) => {
      const out = Object.values(result.outputs)[0];
      if (mode === 'hamming') {
        const d = out.toNumber();
        panel.result.replaceChildren(resultValue('Hamming distance', d, { detail: `of ${BITS} bits differ (${((100 * d) / BITS).toFixed(1)} %); the server learned nothing` }));
      } else {
        const match = out.toBoolean();
        const detail = match ? 'the distance is within the threshold; you learned nothing more' : 'the distance is above the threshold; you learned nothing more';
        panel.result.replaceChildren(resultValue('Same eye?', match ? 1 : 0, { text: match ? 'match' : 'no match', detail }));
      }
    },
    finished: (result) => protection.record(result),
  });
  const describe = () => {
    const name = mode;
    protection.showService(name, undefined);
    // A later switch of mode may answer first: only the current one's answer counts.
    void describeService(name, roles, panel).then((info) => name === mode && protection.showService(name, info));
  };

  root.append(
    ...header(
      'Hamming distance: iris codes',
      'The server has enrolled an iris code. Compare yours with it: the garbled circuit counts the bits that differ, and only you learn the count — or, in the second mode, only whether it is small enough to be the same eye. Your code never leaves this browser in the clear; the server’s never leaves the server.',
    ),
    choice<Mode>(
      'mode',
      [
        { value: 'hamming', label: 'learn the distance (hamming)' },
        { value: 'hamming_threshold', label: 'learn only “same eye or not” (hamming_threshold)' },
      ],
      mode,
      (m) => {
        mode = m;
        describe();
      },
    ),
    roles,
    h('h3', {}, 'Your iris code'),
    h('p', { class: 'hint' }, 'Click or drag on the strip to flip bits. The strip is the iris unwrapped: 15 rings from the pupil out, 60 angles around.'),
    editor.element,
    h(
      'div',
      { class: 'buttons' },
      h('button', { type: 'button', class: 'secondary', 'data-testid': 'iris-rescan', onclick: () => setCode(rescan(enrolled, RESCAN_NOISE)) }, 'Re-scan of the enrolled eye'),
      h('button', { type: 'button', class: 'secondary', 'data-testid': 'iris-random', onclick: () => setCode(randomIris()) }, 'Another eye'),
      h('button', { type: 'button', class: 'secondary', onclick: () => setCode(editor.bits.map((b) => !b)) }, 'Invert'),
    ),
    h('p', { class: 'hint' }, 'The re-scan flips 12 % of the bits of the demo server’s template, which is publicly known; a real server’s stays secret.'),
    h('details', {}, h('summary', {}, 'Your code as hex'), hexField, hexNote),
    h('h3', {}, 'The server’s enrolled code'),
    lockedIris(),
    protection.element,
    panel.element,
  );
  describe();
}

export const hammingPage: Page = { path: 'hamming', title: 'Hamming distance', mount };
