// The worker's end of its supervisor's port: messages are run one at a time in the order they
// came (so each shard stays single-writer and sees writes and reads in the order sent), however
// many arrive together (several per post, several posts per wake-up), and each is answered on its
// own, in that order.

import type { Answer, Connect, Posted, Sent } from './tasks.js';
import { packReply, unpackTask } from './task-wire.js';

export type Handler = (message: Sent['message']) => Promise<Answer>;

export function serve({ port, begun }: Connect, handle: Handler): void {
  const queue: Sent[] = [];
  let running = false;
  // After a fault (a trap) the shards' memory is not trusted: nothing more runs here; the
  // supervisor replaces the thread and sends what was queued behind to the new one.
  let faulted = false;

  async function pump(): Promise<void> {
    running = true;
    for (let next = queue.shift(); next && !faulted; next = queue.shift()) {
      Atomics.store(begun, 0, next.seq);
      const { message } = next;
      const reply = await handle('task' in message ? unpackTask(message) : message);
      if ('fault' in reply) faulted = true;
      const packed = 'task' in message ? packReply(message, reply) : { value: reply, transfer: [] };
      port.postMessage(packed.value, packed.transfer);
    }
    running = false;
  }

  port.on('message', (posted: Posted) => {
    queue.push(...posted);
    if (!running) void pump();
  });
}
