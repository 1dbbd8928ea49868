/**
 * `length` random letters and digits, from Math.random: for names that must not collide (a run id's suffix, a
 * marker no user text matches), not for secrets. node:crypto would cost a local run's start ~3 ms to load.
 */
export function randomId(length: number): string {
  let id = "";
  while (id.length < length) id += Math.random().toString(36).slice(2);
  return id.slice(0, length);
}
