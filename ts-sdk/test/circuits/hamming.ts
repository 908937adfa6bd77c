// The Hamming distance between two 900-bit vectors: XORs (free) and a popcount (an adder tree).
import { circuit, evaluator, garbler, uint } from 'garblet/circuit';

export default circuit(
  {
    inputs: { x: garbler(uint(900)), y: evaluator(uint(900)) },
    outputs: { distance: 'evaluator' },
  },
  ({ x, y }) => ({ distance: x.xor(y).popcount() }),
);
