import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** One dependency the process needs to do its work (the database, Redis). */
export interface HealthCheck {
  name: string;
  check(): Promise<void>;
}

export interface HealthReport {
  ok: boolean;
  checks: Record<string, { ok: boolean; ms: number; error?: string }>;
}

/** Runs every check at once, each bounded by `timeoutMs`, so a hung dependency reads as unhealthy instead of hanging the probe. */
export async function checkHealth(checks: HealthCheck[], timeoutMs = 2000): Promise<HealthReport> {
  const results = await Promise.all(
    checks.map(async (c) => {
      const t0 = performance.now();
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          c.check(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return [c.name, { ok: true, ms: Math.round(performance.now() - t0) }] as const;
      } catch (error) {
        return [c.name, { ok: false, ms: Math.round(performance.now() - t0), error: (error as Error).message }] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ok: results.every(([, r]) => r.ok), checks: Object.fromEntries(results) };
}

export const HEALTH_PATH = '/healthz';

/** GET /healthz: 200 with the report when every check passes, 503 otherwise (load balancers and Kubernetes read the status). */
export function createHealthRoute(report: () => Promise<HealthReport>) {
  return {
    path: HEALTH_PATH,
    method: ['GET'],
    handler: (_req: IncomingMessage, res: ServerResponse) => {
      report()
        .then((r) => {
          res.writeHead(r.ok ? 200 : 503, { 'content-type': 'application/json' });
          res.end(JSON.stringify(r));
        })
        .catch((error: unknown) => {
          res.writeHead(503, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ ok: false, checks: {}, error: (error as Error).message }));
        });
    },
  };
}

/** A bare HTTP server for /healthz (Socket Mode, and serve's roles without the Slack receiver). */
export async function startHealthServer(port: number, report: () => Promise<HealthReport>): Promise<Server> {
  const route = createHealthRoute(report);
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === HEALTH_PATH) return route.handler(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, resolve));
  return server;
}
