import { circuit, evaluator, garbler, uint } from 'garblet/circuit';

export default circuit(
  {
    inputs: { a: garbler(uint(8)), b: evaluator(uint(8)) },
    outputs: { mixed: 'evaluator' },
  },
  ({ a, b }) => {
    const sum = a.add(b); // 9 bits: 255 + 255 needs them
    return { mixed: sum.xor(a) }; // ← the error
  },
);
