// Served by a real `garblet serve` in circuit-serve.test.mjs: every input and output type the
// server maps (uint, bytes, an array, a bit, signed inputs of both parties, a signed output).
import { array, bytes, circuit, evaluator, garbler, int, sum, uint } from 'garblet/circuit';

export default circuit(
  {
    inputs: {
      limit: garbler(uint(16)),
      bids: garbler(array(uint(8), 3)),
      mine: evaluator(uint(16)),
      tag: evaluator(bytes(2)),
      floor: garbler(int(8)),
      change: evaluator(int(12)),
    },
    outputs: {
      over: 'both',
      margin: { to: 'evaluator', type: int(18) },
      total: 'evaluator',
      swapped: { to: 'evaluator', type: bytes(2) },
      moved: { to: 'evaluator', type: int(13) },
    },
  },
  ({ limit, bids, mine, tag, floor, change }) => ({
    over: mine.gt(limit),
    margin: mine.toInt().sub(limit.toInt()),
    total: sum([...bids, mine]),
    swapped: [tag[1], tag[0]],
    moved: change.add(floor),
  }),
);
