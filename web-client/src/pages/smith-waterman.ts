/** Smith–Waterman local alignment of your protein against the server's. */
import { h } from '../dom';
import { describeService, header, resultValue, type Page } from '../page';
import { RunPanel } from '../run-panel';

const AMINO_ACIDS = 'ARNDCQEGHILKMFPSTWYV';

/** Samples to align against the server's protein (the demo server holds hemoglobin β's start). */
const SAMPLES: { label: string; protein: string }[] = [
  { label: 'Hemoglobin α (first 60)', protein: 'MVLSPADKTNVKAAWGKVGAHAGEYGAEALERMFLSFPTTKTYFPHFDLSHGSAQVKGHG' },
  { label: 'Myoglobin (first 60)', protein: 'MGLSDGEWQLVLNVWGKVEADIPGHGQEVLIRLFKGHPETLEKFDKFKHLKSEDEMKASE' },
];

function randomProtein(length: number): string {
  return Array.from({ length }, () => AMINO_ACIDS[Math.floor(Math.random() * AMINO_ACIDS.length)]).join('');
}

function mount(root: HTMLElement): void {
  const field = h('textarea', { class: 'sequence', rows: 3, spellcheck: 'false', 'data-testid': 'protein', 'aria-label': 'your protein' }, SAMPLES[0].protein);
  const roles = h('div');
  const panel = new RunPanel({
    label: 'Align privately',
    prepare: () => {
      const protein = field.value.replace(/\s+/g, '').toUpperCase();
      if (!protein) throw new Error('Your protein is empty: paste one, or pick a sample.');
      const bad = [...protein].find((c) => !AMINO_ACIDS.includes(c));
      if (bad) throw new Error(`'${bad}' is not one of the 20 standard amino acids (${AMINO_ACIDS}).`);
      return { service: 'smith_waterman', inputs: { protein } };
    },
    show: (result) => {
      panel.result.replaceChildren(resultValue('Local alignment score', result.outputs.score.value, { detail: 'the best-scoring local alignment (BLOSUM62, gap 12 + 7k) between the server’s protein and yours; the server learned nothing' }));
    },
  });

  root.append(
    ...header(
      'Smith–Waterman: protein alignment',
      'The server holds a protein sequence. Score the best local alignment of yours against it — BLOSUM62 substitutions and affine gaps, the standard of sequence search — and learn only the score. The server turns its own residues into rows of the score table in the clear, so each cell costs the circuit little more than one lookup.',
    ),
    roles,
    h('h3', {}, 'Your protein'),
    field,
    h(
      'div',
      { class: 'buttons' },
      ...SAMPLES.map((s) => h('button', { type: 'button', class: 'secondary', onclick: () => (field.value = s.protein) }, s.label)),
      h('button', { type: 'button', class: 'secondary', onclick: () => (field.value = randomProtein(60)) }, 'Random protein'),
    ),
    h('p', { class: 'hint' }, 'One letter per amino acid: ', h('code', {}, AMINO_ACIDS), ', upper or lower case; spaces and line breaks are ignored. Longer proteins cost more: about 170 AND gates per pair of residues.'),
    panel.element,
  );
  void describeService('smith_waterman', roles, panel);
}

export const smithWatermanPage: Page = { path: 'smith-waterman', title: 'Smith–Waterman', mount };
