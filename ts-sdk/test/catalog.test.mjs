/**
 * The catalog arrives with the server's hello: `services()` and `service()` both answer at once
 * (plain values, not promises) and agree with each other.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serverAndSession } from './support/server.mjs';

const live = serverAndSession();

test('services() returns the catalog itself, not a promise', () => {
  const services = live.session.services();
  assert.ok(Array.isArray(services), 'an array');
  assert.ok(!(services instanceof Promise));
  const names = services.map((s) => s.name);
  for (const name of ['aes128', 'add64', 'levenshtein', 'levenshtein_text', 'psi', 'aes128_bp']) assert.ok(names.includes(name), name);
});

test('service(name) answers at once with the same entry as services()', () => {
  for (const info of live.session.services()) assert.deepEqual(live.session.service(info.name), info);
  const add = live.session.service('add64');
  assert.deepEqual(
    add.inputs.map((f) => [f.name, f.party, f.bits]),
    [
      ['a', 'garbler', 64],
      ['b', 'evaluator', 64],
    ],
  );
  assert.equal(live.session.service('no_such_service'), undefined);
});

test("changing the list services() returned does not change the session's catalog", () => {
  const services = live.session.services();
  const count = services.length;
  services.length = 0;
  assert.equal(live.session.services().length, count);
});
