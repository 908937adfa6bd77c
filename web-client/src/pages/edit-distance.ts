/** Edit (Levenshtein) distance between the server's string and yours: DNA or text. */
import { h } from '../dom';
import { choice, describeService, header, resultValue, type Page } from '../page';
import { Protection } from '../protection';
import { RunPanel } from '../run-panel';

interface Alphabet {
  service: string;
  label: string;
  /** The string the service gets from what was typed. */
  normalize(text: string): string;
  /** Checks the normalized string; returns what is wrong with it, if anything. */
  check(text: string): string | undefined;
  /** "1 base", "83 bases". */
  size(n: number): string;
  /** What the field accepts, besides the alphabet. */
  note: string;
  sample(): string;
}

const DNA: Alphabet = {
  service: 'levenshtein',
  label: 'DNA (levenshtein: 2 bits a base)',
  // Sequences come wrapped in lines or grouped in blocks of ten: spaces and line breaks are not bases.
  normalize: (t) => t.replace(/\s+/g, '').toUpperCase(),
  check: (t) => {
    const bad = [...t].find((c) => !'ACGT'.includes(c));
    return bad === undefined ? undefined : `'${bad}' is not a base: a DNA sequence holds only the bases A, C, G and T.`;
  },
  size: (n) => `${n} ${n === 1 ? 'base' : 'bases'}`,
  note: 'Upper or lower case; spaces and line breaks are ignored.',
  sample: () => Array.from({ length: 100 }, () => 'ACGT'[Math.floor(Math.random() * 4)]).join(''),
};

const TEXT: Alphabet = {
  service: 'levenshtein_text',
  label: 'text (levenshtein_text: 8 bits a character)',
  normalize: (t) => t,
  check: (t) => ([...t].every((c) => c.charCodeAt(0) <= 0xff) ? undefined : 'The text must be Latin-1: letters, digits, punctuation and accents such as é, but no emoji or other scripts.'),
  size: (n) => `${n} ${n === 1 ? 'character' : 'characters'}`,
  note: 'Every character counts, spaces included.',
  sample: () => 'the quick brown fox jumped over a lazy dog',
};

/** A few random substitutions, insertions and deletions, as a re-sequenced sample would have. */
function mutate(text: string, letters: string): string {
  const chars = [...text];
  const edits = Math.max(1, Math.round(chars.length * 0.05));
  const pick = () => letters[Math.floor(Math.random() * letters.length)];
  for (let e = 0; e < edits; e++) {
    const i = Math.floor(Math.random() * (chars.length + 1));
    const kind = Math.floor(Math.random() * 3);
    if (kind === 0 && i < chars.length) chars[i] = pick();
    else if (kind === 1 || chars.length === 0) chars.splice(i, 0, pick());
    else chars.splice(Math.min(i, chars.length - 1), 1);
  }
  return chars.join('');
}

function mount(root: HTMLElement): void {
  let alphabet = DNA;
  const texts = new Map<Alphabet, string>([
    [DNA, DNA.sample()],
    [TEXT, TEXT.sample()],
  ]);
  const field = h('textarea', { class: 'sequence', rows: 4, spellcheck: 'false', 'data-testid': 'string', 'aria-label': 'your string' });
  const length = h('p', { class: 'hint', 'data-testid': 'string-length' });
  const showLength = () => {
    const n = [...alphabet.normalize(field.value)].length;
    length.textContent = `Your string: ${alphabet.size(n)}. ${alphabet.note} Its length is public (it sets the circuit’s size); its content is not.`;
    length.dataset.length = String(n);
  };
  const setText = (t: string) => {
    field.value = t;
    texts.set(alphabet, t);
    showLength();
  };
  field.addEventListener('input', () => setText(field.value));

  const roles = h('div');
  const protection = new Protection();
  const panel = new RunPanel({
    label: 'Compute the distance privately',
    prepare: () => {
      const b = alphabet.normalize(field.value);
      if (!b) throw new Error('Your string is empty: type or paste one, or press Sample.');
      const problem = alphabet.check(b);
      if (problem) throw new Error(problem);
      return { service: alphabet.service, inputs: { b }, security: protection.security };
    },
    show: (result) => {
      const d = result.outputs.distance.toNumber();
      panel.result.replaceChildren(resultValue('Edit distance', d, { detail: 'insertions, deletions and substitutions between the server’s string and yours; the server learned nothing' }));
    },
    finished: (result) => protection.record(result),
  });
  const select = (a: Alphabet) => {
    alphabet = a;
    setText(texts.get(a)!);
    protection.showService(a.service, undefined);
    // A later switch of alphabet may answer first: only the current one's answer counts.
    void describeService(a.service, roles, panel).then((info) => a === alphabet && protection.showService(a.service, info));
  };

  root.append(
    ...header(
      'Edit distance: DNA or text',
      'The server holds a DNA sequence and a sentence. Find out how many edits separate yours from it — without either side showing its string to the other. The circuit fills the Levenshtein table cell by cell, a few AND gates a cell, streamed to this browser as it is garbled.',
    ),
    choice(
      'alphabet',
      [
        { value: 'dna', label: DNA.label },
        { value: 'text', label: TEXT.label },
      ],
      'dna',
      (v) => select(v === 'dna' ? DNA : TEXT),
    ),
    roles,
    h('h3', {}, 'Your string'),
    field,
    length,
    h(
      'div',
      { class: 'buttons' },
      h('button', { type: 'button', class: 'secondary', onclick: () => setText(alphabet.sample()) }, 'Sample'),
      h('button', { type: 'button', class: 'secondary', onclick: () => setText(mutate(field.value, alphabet === DNA ? 'ACGT' : 'abcdefghijklmnopqrstuvwxyz ')) }, 'Mutate 5 %'),
    ),
    protection.element,
    panel.element,
  );
  select(DNA);
}

export const editDistancePage: Page = { path: 'edit-distance', title: 'Edit distance', mount };
