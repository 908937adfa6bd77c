/**
 * Private AES: AES-128 of your block under the server's key, which you never see. With the
 * authenticated protection chosen, the page prepares the next run ahead while it is idle: after
 * each authenticated run it parks one computation's set-up and preprocessing on a session of its
 * own, so the next click waits only for the online phase. The first authenticated run computes
 * whole, so that the cost table shows the mode's whole price beside its online phase's.
 */
import { PreparedAhead } from '../connection';
import { FIPS197 } from '../demo-values';
import { h } from '../dom';
import { hex, parseHex } from '../format';
import { choice, describeService, header, resultValue, type Page } from '../page';
import { Protection } from '../protection';
import { RunPanel } from '../run-panel';

type Circuit = 'aes128' | 'aes128_bp';

function randomBlock(): string {
  return hex(crypto.getRandomValues(new Uint8Array(16)));
}

function mount(root: HTMLElement): void {
  let circuit: Circuit = 'aes128';
  const field = h('input', { type: 'text', class: 'hex', value: FIPS197.plaintext, maxlength: 47, spellcheck: 'false', 'data-testid': 'plaintext', 'aria-label': 'your 16-byte block in hex' });
  const roles = h('div');
  const protection = new Protection();
  const ahead = new PreparedAhead();
  const panel = new RunPanel({
    label: 'Encrypt privately',
    prepare: () => {
      const block = parseHex(field.value);
      // Whole bytes here; the SDK checks that they are 16, in the words the command line uses.
      if (!block) throw new Error('Your block must be hex digits (0-9, a-f), two a byte.');
      return { service: circuit, inputs: { plaintext: block }, security: protection.security, ahead };
    },
    show: (result) => {
      const ciphertext = hex(result.outputs.ciphertext.bytes());
      const block = hex(parseHex(field.value)!);
      const fips =
        block === FIPS197.plaintext
          ? ciphertext === FIPS197.ciphertext
            ? 'This is FIPS-197’s Appendix C.1 ciphertext: the server was given FIPS-197’s public key 000102…0f (GARBLET_AES_KEY).'
            : 'Not FIPS-197’s Appendix C.1 ciphertext: the server has a key of its own, as it should.'
          : undefined;
      panel.result.replaceChildren(resultValue('AES-128(key, block)', ciphertext, { detail: fips ?? 'The server learned nothing about your block, nor the ciphertext.' }));
      if (result.prepared) {
        panel.result.append(
          h('p', { class: 'hint', 'data-testid': 'prepared' }, 'Online phase only: this run’s set-up and preprocessing, which do not depend on your block, were done ahead while the page was idle.'),
        );
      }
    },
    finished: (result) => protection.record(result),
    // Idle again: if the next run is authenticated, its preparation starts now.
    ended: () => {
      if (protection.security === 'authenticated') ahead.prepare(circuit);
      else ahead.drop();
    },
  });
  // Another circuit or mode: a preparation held for the previous choice is of no use.
  protection.onChange = () => {
    if (protection.security !== 'authenticated') ahead.drop();
  };
  addEventListener('hashchange', () => ahead.drop(), { once: true });
  const describe = () => {
    const name = circuit;
    protection.showService(name, undefined);
    // A later switch of circuit may answer first: only the current one's answer counts.
    void describeService(name, roles, panel).then((info) => name === circuit && protection.showService(name, info));
  };

  root.append(
    ...header(
      'Private AES',
      'The server holds an AES-128 key. Send it nothing but garbled-circuit traffic and get back AES_k(your block): you learn the ciphertext and nothing about the key; the server learns nothing about your block. This is an oblivious PRF: the basis of private set intersection, password hardening and private contact discovery.',
    ),
    choice<Circuit>(
      'circuit',
      [
        { value: 'aes128', label: 'Bristol Fashion circuit (aes128, 6,400 AND gates)' },
        { value: 'aes128_bp', label: 'library circuit, Boyar–Peralta S-box (aes128_bp, 5,120 AND gates)' },
      ],
      circuit,
      (c) => {
        circuit = c;
        ahead.drop();
        describe();
      },
    ),
    h(
      'p',
      { class: 'hint', 'data-testid': 'circuit-hint' },
      'Both compute AES-128 under the same key. The library’s circuit has a fifth fewer AND gates, and this browser builds it itself where it reads the Bristol circuit from the server: it is the cheaper one in the standard and the authenticated mode. Under cut-and-choose the Bristol circuit costs less, as the server’s input to the library’s is its 1,408 bits of round keys rather than the 128-bit key.',
    ),
    roles,
    h('h3', {}, 'Your block'),
    h('label', { class: 'field' }, '16 bytes, hex ', field),
    h(
      'div',
      { class: 'buttons' },
      h('button', { type: 'button', class: 'secondary', onclick: () => (field.value = FIPS197.plaintext) }, 'FIPS-197 example'),
      h('button', { type: 'button', class: 'secondary', 'data-testid': 'random-block', onclick: () => (field.value = randomBlock()) }, 'Random block'),
    ),
    h('p', { class: 'hint' }, `FIPS-197 Appendix C.1: key ${FIPS197.key}, plaintext ${FIPS197.plaintext} → ciphertext ${FIPS197.ciphertext}. The server uses that key only when GARBLET_AES_KEY sets it; without a key it draws a random one at start-up.`),
    protection.element,
    panel.element,
  );
  describe();
}

export const aesPage: Page = { path: 'aes', title: 'Private AES', mount };
