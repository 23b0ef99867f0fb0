// A row's server in its own process, so the load generator never competes with it inside one event loop.
// Protocol over IPC: sends { port } once listening; answers 'counts' with the ServerCounts; exits on 'close'.
import type { AddressInfo } from 'node:net';
import { HTTP_ROWS, type HttpRow, type ServerCounts, startServer } from './servers.js';

const row = process.argv[2] as HttpRow;
if (!HTTP_ROWS.includes(row)) throw new Error(`unknown HTTP row ${JSON.stringify(row)}`);
if (!process.send) throw new Error('server-child runs under the bench runner (IPC channel required)');

const counts: ServerCounts = { handled: 0, refused: 0 };
const server = await startServer(row, counts);
process.send({ port: (server.address() as AddressInfo).port });
process.on('message', (message) => {
  if (message === 'counts') {
    const cpu = process.cpuUsage();
    process.send?.({ counts: { ...counts, cpuMicros: cpu.user + cpu.system } });
  }
  if (message === 'close') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
