/**
 * The pieces of the nginx scale-out test (tests/nginx.spec.ts): nginx from apt, a self-signed
 * certificate, `garblet serve` processes that log to files, nginx running deploy/nginx/garblet.conf
 * from a temporary prefix (its own pid, logs and ports: nothing of the system's nginx is used),
 * and `garblet run` with a time limit.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { garbletBinary, root } from '../../scripts/stack.mjs';

const NGINX_PATHS = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'];

function findNginx(): string | undefined {
  const found = NGINX_PATHS.find((p) => existsSync(p));
  if (found) return found;
  const which = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' });
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : undefined;
}

/**
 * nginx's path, installed from apt if missing (as root, or with passwordless sudo); otherwise
 * why it cannot be had.
 */
export function ensureNginx(): { nginx: string } | { why: string } {
  const present = findNginx();
  if (present) return { nginx: present };
  const root_ = process.getuid?.() === 0;
  if (!root_ && spawnSync('sudo', ['-n', 'true']).status !== 0) return { why: 'nginx is not installed, and installing it needs root (apt-get install nginx)' };
  if (spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) return { why: 'nginx is not installed, and there is no apt-get to install it with' };
  const apt = (args: string[]) => {
    const [cmd, argv] = root_ ? ['apt-get', args] : ['sudo', ['-n', 'apt-get', ...args]];
    console.log(`[nginx] ${cmd} ${argv.join(' ')}`);
    return spawnSync(cmd, argv, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 300_000 }).status === 0;
  };
  const install = ['install', '-y', '--no-install-recommends', 'nginx'];
  if (!apt(install)) apt(['update']) && apt(install);
  const installed = findNginx();
  return installed ? { nginx: installed } : { why: 'nginx is not installed, and apt-get install nginx failed (no network or no package source?)' };
}

export interface Certificate {
  cert: string;
  key: string;
  /** base64 SHA-256 of the SubjectPublicKeyInfo: what Chromium's --ignore-certificate-errors-spki-list takes. */
  spki: string;
  /** SHA-256 fingerprint of the certificate, as Node's getPeerCertificate() gives it. */
  fingerprint: string;
}

/**
 * A fresh key and a self-signed certificate for localhost and 127.0.0.1, written to `cert` and
 * `key` (replacing what is there). An end-entity certificate (CA:FALSE), so that clients that
 * take it as their trust anchor (rustls, for `garblet run --ca-cert`) accept it as the server's.
 */
export function makeCertificate(dir: string, cert = join(dir, 'cert.pem'), key = join(dir, 'key.pem')): Certificate {
  const config = join(dir, 'openssl.cnf');
  writeFileSync(
    config,
    [
      '[req]',
      'distinguished_name = dn',
      'x509_extensions = ext',
      'prompt = no',
      '[dn]',
      'CN = localhost',
      '[ext]',
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature',
      'extendedKeyUsage = serverAuth',
      'subjectAltName = DNS:localhost, IP:127.0.0.1',
      '',
    ].join('\n'),
  );
  // Written beside, then renamed over: nginx (or a reload) never sees half a file.
  execFileSync('openssl', ['req', '-x509', '-config', config, '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-keyout', `${key}.new`, '-out', `${cert}.new`], { stdio: 'pipe' });
  execFileSync('mv', ['-f', `${key}.new`, key]);
  execFileSync('mv', ['-f', `${cert}.new`, cert]);
  const x509 = new X509Certificate(readFileSync(cert));
  const spkiDer = x509.publicKey.export({ type: 'spki', format: 'der' });
  return { cert, key, spki: createHash('sha256').update(spkiDer).digest('base64'), fingerprint: x509.fingerprint256 };
}

/** The SHA-256 fingerprint of the certificate a TLS server at 127.0.0.1:`port` presents now. */
export function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false, timeout: 5000 }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.once('error', reject);
    socket.once('timeout', () => socket.destroy(new Error('TLS handshake timed out')));
  });
}

/** A child process with a deadline on everything: `stop` never waits longer than `graceMs`. */
async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** `garblet serve` with its log (stderr) in a file, to read back. */
export class Garblet {
  private constructor(readonly child: ChildProcess, readonly addr: string, readonly logFile: string) {}

  /** Starts `garblet serve --config` with `config` (TOML text), in `dir`, named `name`. */
  static async start(dir: string, name: string, config: string, env: Record<string, string> = {}): Promise<Garblet> {
    const configFile = join(dir, `${name}.toml`);
    const logFile = join(dir, `${name}.log`);
    writeFileSync(configFile, config);
    const log = openSync(logFile, 'w');
    const child = spawn(garbletBinary, ['serve', '--config', configFile], { stdio: ['ignore', 'pipe', log], env: { ...process.env, GARBLET_LOG: 'info', NO_COLOR: '1', ...env } });
    closeSync(log);
    const addr = await new Promise<string>((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => fail('did not start within 30 s'), 30_000);
      const fail = (why: string) => {
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(new Error(`garblet serve (${name}) ${why}:\n${readFileSync(logFile, 'utf8').slice(-4000)}`));
      };
      child.stdout!.on('data', (chunk) => {
        seen += chunk;
        const m = /listening on (\S+)/.exec(seen);
        if (m) {
          clearTimeout(timer);
          child.removeAllListeners('exit');
          resolve(m[1]);
        }
      });
      child.once('exit', (code, signal) => fail(`exited (${signal ?? `code ${code}`}) before it listened`));
    });
    child.stdout!.resume();
    return new Garblet(child, addr, logFile);
  }

  get port(): number {
    return Number(this.addr.split(':').pop());
  }

  log(): string {
    return readFileSync(this.logFile, 'utf8');
  }

  /** `GET /metrics.json` (the counters as JSON), straight to this process (not through nginx). */
  async metrics(): Promise<Record<string, number>> {
    const response = await fetch(`http://${this.addr}/metrics.json`, { signal: AbortSignal.timeout(5000) });
    return (await response.json()) as Record<string, number>;
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }

  stop(): Promise<void> {
    return stopChild(this.child);
  }
}

/**
 * deploy/nginx/garblet.conf as shipped, with only what a test on a shared machine must change:
 * the upstream ports, the listen address, the certificate paths, and `proxy_bind 127.0.0.2`
 * (nginx connects to the servers from 127.0.0.2, so that the proxy's address differs from the
 * clients' 127.0.0.1 and the servers' logs show which one they used).
 */
export function nginxSiteConfig({ listen, upstreams, cert, key }: { listen: number; upstreams: string[]; cert: string; key: string }): string {
  let text = readFileSync(join(root, 'deploy', 'nginx', 'garblet.conf'), 'utf8');
  const replace = (pattern: RegExp, by: string) => {
    if (!pattern.test(text)) throw new Error(`deploy/nginx/garblet.conf no longer has a line matching ${pattern}: update the test`);
    text = text.replace(pattern, by);
  };
  replace(/^(\s*server )127\.0\.0\.1:8081( .*)$/m, `$1${upstreams[0]}$2`);
  replace(/^(\s*server )127\.0\.0\.1:8082( .*)$/m, `$1${upstreams[1]}$2`);
  replace(/^(\s*)listen 443 ssl;$/m, `$1listen 127.0.0.1:${listen} ssl;`);
  replace(/^\s*listen \[::\]:443 ssl;\n/m, '');
  replace(/^(\s*ssl_certificate\s+)\S+;$/m, `$1${cert};`);
  replace(/^(\s*ssl_certificate_key\s+)\S+;$/m, `$1${key};`);
  replace(/^(\s*)(proxy_pass http:\/\/garblet;)$/m, '$1$2\n$1proxy_bind 127.0.0.2;');
  return text;
}

/** nginx with its own configuration, pid file, logs and temporary files under `dir`. */
export class Nginx {
  private constructor(readonly nginx: string, readonly child: ChildProcess, readonly dir: string) {}

  private static args(dir: string): string[] {
    return ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')];
  }

  static async start(nginx: string, dir: string, site: string, port: number): Promise<Nginx> {
    for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, 'temp', sub), { recursive: true });
    writeFileSync(join(dir, 'garblet.conf'), site);
    writeFileSync(
      join(dir, 'nginx.conf'),
      [
        'daemon off;',
        // As root, nginx's workers would become "nobody", who cannot read this directory.
        process.getuid?.() === 0 ? 'user root root;' : '',
        // One worker: its least_conn counts are the whole picture (several workers share them
        // only with a `zone`).
        'worker_processes 1;',
        `pid ${join(dir, 'nginx.pid')};`,
        `error_log ${join(dir, 'error.log')} notice;`,
        'events { worker_connections 256; }',
        'http {',
        `  access_log ${join(dir, 'access.log')};`,
        ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((sub) => `  ${sub}_temp_path ${join(dir, 'temp', sub)};`),
        `  include ${join(dir, 'garblet.conf')};`,
        '}',
        '',
      ].join('\n'),
    );
    const test = spawnSync(nginx, [...Nginx.args(dir), '-t'], { encoding: 'utf8', timeout: 10_000 });
    if (test.status !== 0) throw new Error(`nginx -t refused the configuration:\n${test.stderr}`);
    const child = spawn(nginx, Nginx.args(dir), { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    // Ready once it accepts TLS connections.
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`nginx exited (code ${child.exitCode}):\n${stderr}\n${readFileSync(join(dir, 'error.log'), 'utf8')}`);
      try {
        await servedFingerprint(port);
        return new Nginx(nginx, child, dir);
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`nginx did not accept TLS on port ${port} within 15 s: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** `nginx -s reload`: SIGHUP to the master, which re-reads the configuration and certificates. */
  reload(): void {
    execFileSync(this.nginx, [...Nginx.args(this.dir), '-s', 'reload'], { stdio: 'pipe', timeout: 10_000 });
  }

  errorLog(): string {
    return readFileSync(join(this.dir, 'error.log'), 'utf8');
  }

  stop(): Promise<void> {
    // nginx's graceful stop is SIGQUIT; SIGTERM is its fast stop, which is what a test wants.
    return stopChild(this.child);
  }
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** Date.now() when it ended. */
  endedAt: number;
}

/** `garblet run` with a time limit: a run that hangs is killed and fails the test. */
export function garbletRun(args: string[], timeoutMs = 60_000): { done: Promise<CliResult>; child: ChildProcess } {
  const started = Date.now();
  const child = spawn(garbletBinary, ['run', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => (stdout += c));
  child.stderr!.on('data', (c) => (stderr += c));
  const done = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`garblet run ${args.join(' ')} did not end within ${timeoutMs / 1000} s (it hangs):\n${stderr}`));
    }, timeoutMs);
    // 'close', not 'exit': all of its output has arrived.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started, endedAt: Date.now() });
    });
  });
  return { done, child };
}
