/** Edit (Levenshtein) distance between the server's string and yours: DNA or text. */
import { h } from '../dom';
import { choice, describeService, header, resultValue, type Page } from '../page';
import { RunPanel } from '../run-panel';

interface Alphabet {
  service: string;
  label: string;
  /** Checks the string; returns what is wrong with it, if anything. */
  check(text: string): string | undefined;
  sample(): string;
}

const DNA: Alphabet = {
  service: 'levenshtein',
  label: 'DNA (levenshtein: 2 bits a base)',
  check: (t) => (/^[ACGT]*$/i.test(t) ? undefined : 'A DNA sequence holds only the bases A, C, G and T.'),
  sample: () => Array.from({ length: 100 }, () => 'ACGT'[Math.floor(Math.random() * 4)]).join(''),
};

const TEXT: Alphabet = {
  service: 'levenshtein_text',
  label: 'text (levenshtein_text: 8 bits a character)',
  check: (t) => ([...t].every((c) => c.charCodeAt(0) <= 0xff) ? undefined : 'The text must be Latin-1: letters, digits, punctuation and accents such as é, but no emoji or other scripts.'),
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
  const showLength = () => (length.textContent = `Your string: ${[...field.value].length} symbols. Its length is public (it sets the circuit’s size); its content is not.`);
  const setText = (t: string) => {
    field.value = t;
    texts.set(alphabet, t);
    showLength();
  };
  field.addEventListener('input', () => setText(field.value));

  const roles = h('div');
  const panel = new RunPanel({
    label: 'Compute the distance privately',
    prepare: () => {
      const problem = alphabet.check(field.value);
      if (problem) throw new Error(problem);
      return { service: alphabet.service, inputs: { b: field.value } };
    },
    show: (result) => {
      const d = result.outputs.distance.toNumber();
      panel.result.replaceChildren(resultValue('Edit distance', d, { detail: 'insertions, deletions and substitutions between the server’s string and yours; the server learned nothing' }));
    },
  });
  const select = (a: Alphabet) => {
    alphabet = a;
    setText(texts.get(a)!);
    void describeService(a.service, roles, panel);
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
    panel.element,
  );
  select(DNA);
}

export const editDistancePage: Page = { path: 'edit-distance', title: 'Edit distance', mount };
