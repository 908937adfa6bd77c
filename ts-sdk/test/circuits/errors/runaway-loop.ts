import { circuit, evaluator, garbler, uint } from 'garblet/circuit';

export default circuit(
  {
    inputs: { x: garbler(uint(16)), step: evaluator(uint(16)) },
    outputs: { rest: 'evaluator' },
  },
  ({ x, step }) => {
    let rest = x;
    // JavaScript takes x.gt(step) as true, always: this loop never ends by itself.
    while (rest.gt(step)) rest = rest.sub(step); // ← the error
    return { rest };
  },
);
