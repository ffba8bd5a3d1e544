// Throwaway worker for hop.ts: answers each task with a fixed list of ten hits (Piscina's default
// export, or the bare port when workerData.port is set).
import { parentPort, workerData } from 'node:worker_threads';

if (workerData.port) parentPort.on('message', () => parentPort.postMessage(workerData.reply));
export default function run() {
  return workerData.reply;
}
