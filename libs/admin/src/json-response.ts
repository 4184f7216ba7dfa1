import type { ServerResponse } from 'node:http';

/** Every admin error body has this shape, so clients need one parser. */
export interface AdminErrorBody {
  error: { message: string; problems?: unknown[] };
}

/** What every answer under /admin carries: never cached, never sniffed into another type. */
export function setAdminHeaders(res: ServerResponse): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

export function sendError(res: ServerResponse, status: number, message: string, problems?: unknown[]): void {
  const body: AdminErrorBody = { error: problems ? { message, problems } : { message } };
  sendJson(res, status, body);
}
