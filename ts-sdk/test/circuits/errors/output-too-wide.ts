import { circuit, evaluator, garbler, uint } from 'garblet/circuit';

export default circuit(
  {
    inputs: { a: garbler(uint(8)), b: evaluator(uint(8)) },
    outputs: { sum: { to: 'evaluator', type: uint(8) } }, // ← the error
  },
  ({ a, b }) => ({ sum: a.add(b) }),
);
