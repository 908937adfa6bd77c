// `npm run demo`: installs what is missing, builds, starts `garblet serve` with its embedded
// default services and the web client, and prints the page's address. Ctrl-C stops both, and so
// does `kill` of this process or of the npm that runs it.
//   GARBLET_PORT=9090 npm run demo    the server on another port (the page is told where)
//   WEB_PORT=5000 npm run demo        the web client on another port (default 4173, or the next free)
import { readFileSync } from 'node:fs';
import { setup } from './setup.mjs';
import { build, configWith, startServer, startWebClient } from './stack.mjs';

const DEFAULT_SERVER = 'ws://127.0.0.1:8080';

// `npm run demo` runs this under a shell, which does not pass signals on. `kill` of npm's process
// usually ends the shell too, leaving this one to init; but npm does not always pass the signal
// to the shell, which then stays, its own parent gone. The demo stops when either happens, so
// that the server and the web client do not stay behind, listening. Who the parents are is read
// first thing: read after the banner, a kill of npm that the banner prompted could come first,
// and the orphaned shell's new parent would pass for npm.
const parentOf = (pid) => {
  try {
    // /proc/PID/stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null; // not Linux, or gone
  }
};
const parent = process.ppid;
const grandparent = parentOf(parent);

// GARBLET_PREBUILT=1: everything is built already (the end-to-end test of stopping the demo
// runs after `npm test`'s build): start at once.
if (!process.env.GARBLET_PREBUILT) {
  setup();
  build();
}

const port = process.env.GARBLET_PORT;
let server;
try {
  // Without GARBLET_PORT: exactly `garblet serve`, the embedded default configuration.
  server = await startServer({ config: port ? configWith({ listen: `127.0.0.1:${port}` }) : undefined, inherit: true });
} catch (e) {
  console.error(`\n[demo] garblet serve did not start: ${e.message.split('\n')[0]}`);
  console.error(`[demo] Is port ${port ?? 8080} taken (another garblet serve?) Stop it, or run GARBLET_PORT=9090 npm run demo.`);
  process.exit(1);
}
const web = await startWebClient({ port: Number(process.env.WEB_PORT ?? 4173) });

const page = new URL(web.url);
if (server.url !== DEFAULT_SERVER) page.searchParams.set('server', server.url);
console.log(`
  Garblet demo
    server      ${server.url}  (garblet serve, default services)
    web client  ${page}

  Open the web client in a browser. Ctrl-C stops both.
`);

let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  await Promise.all([server.stop(), web.stop()]);
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
process.on('SIGHUP', () => void stop(0));
// Stop when the shell or the npm above it goes (see the top).
setInterval(() => (process.ppid !== parent || parentOf(parent) !== grandparent) && void stop(0), 500).unref();
server.exited.then(() => !stopping && (console.error('[demo] garblet serve exited'), stop(1)));
web.exited.then(() => !stopping && (console.error('[demo] the web client exited'), stop(1)));
