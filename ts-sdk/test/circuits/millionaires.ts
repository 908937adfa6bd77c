// Yao's millionaires: is the server's fortune larger than the client's? Both learn the answer.
import { circuit, evaluator, garbler, uint } from 'garblet/circuit';

export default circuit(
  {
    inputs: { server: garbler(uint(64)), client: evaluator(uint(64)) },
    outputs: { serverIsRicher: 'both' },
  },
  ({ server, client }) => ({ serverIsRicher: server.gt(client) }),
);
