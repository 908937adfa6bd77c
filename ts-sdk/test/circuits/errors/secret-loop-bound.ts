import { circuit, evaluator, garbler, uint } from 'garblet/circuit';

export default circuit(
  {
    inputs: { x: garbler(uint(16)), n: evaluator(uint(4)) },
    outputs: { y: 'evaluator' },
  },
  ({ x, n }) => {
    let y = x;
    for (let i = 0; i < (n as unknown as number); i++) { // ← the error
      y = y.shr(1);
    }
    return { y };
  },
);
