// The edit distance between two DNA strings of 100 symbols (2 bits each: A, C, G, T).
//
// The table D[i][j] is kept as the differences between neighbouring cells, each −1, 0 or +1
// and held as two bits (minus = [−1], plus = [+1]), never as values: with t = [a_i ≠ b_j],
// D[i][j] = diag + (t ∧ ¬c), c = [up < diag] ∨ [left < diag], and a cell costs four ANDs
// beyond t. The distance is n plus the sum of the last row's differences.
import { Bit, array, circuit, constant, evaluator, garbler, popcount, uint } from 'garblet/circuit';

const N = 100;

interface Difference {
  minus: Bit;
  plus: Bit;
}

export default circuit(
  {
    inputs: { a: garbler(array(uint(2), N)), b: evaluator(array(uint(2), N)) },
    outputs: { distance: 'evaluator' },
  },
  ({ a, b }) => {
    const plusOne = (): Difference => ({ minus: constant(false), plus: constant(true) });
    // row[j] is D[i−1][j+1] − D[i−1][j], the difference along the row above; left is
    // D[i][j] − D[i−1][j], down the column to the left. Row 0 and column 0 count up: +1.
    let row: Difference[] = Array.from({ length: N }, plusOne);
    for (let i = 0; i < N; i++) {
      let left = plusOne();
      const next: Difference[] = [];
      for (let j = 0; j < N; j++) {
        const up = row[j];
        const t = a[i].ne(b[j]);
        const g = t.and(up.minus.or(left.minus).not());
        const gLeft = g.and(left.plus);
        const gUp = g.and(up.plus);
        // D − left (along the row) and D − up (down the column): g minus the neighbour's
        // difference, no AND beyond g ∧ plus (g = 1 never meets a −1 neighbour).
        next.push({ plus: left.minus.xor(g.xor(gLeft)), minus: left.plus.xor(gLeft) });
        left = { plus: up.minus.xor(g.xor(gUp)), minus: up.plus.xor(gUp) };
      }
      row = next;
    }
    // D[N][N] = N + Σ_j (plus_j − minus_j) = Σ_j plus_j + Σ_j ¬minus_j.
    return { distance: popcount([...row.map((d) => d.plus), ...row.map((d) => d.minus.not())]) };
  },
);
