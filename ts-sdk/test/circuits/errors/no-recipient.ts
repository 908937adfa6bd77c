import { circuit, evaluator, garbler, uint } from 'garblet/circuit';

export default circuit( // ← the error
  {
    inputs: { a: garbler(uint(8)), b: evaluator(uint(8)) },
    outputs: { sum: 'evaluator' },
  },
  ({ a, b }) => ({ sum: a.add(b), extra: a.mul(b) }),
);
