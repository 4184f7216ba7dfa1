import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { GatewayConfig } from '@switchboard/config';
import { Inbox } from '@switchboard/inbox';
import { afterEach, describe, expect, it } from 'vitest';
import { AdminModule } from './admin.module.js';

/** A route outside /admin with a parameter Express decodes (decorators applied by hand: specs run without decorator syntax). */
class ElsewhereController {
  one(): string {
    return 'ok';
  }
}
Get(':id')(ElsewhereController.prototype, 'one', Object.getOwnPropertyDescriptor(ElsewhereController.prototype, 'one')!);
Controller('elsewhere')(ElsewhereController);

const apps: INestApplication[] = [];
afterEach(async () => Promise.all(apps.splice(0).map((a) => a.close())));

async function start(): Promise<string> {
  const config = { listen: { host: '127.0.0.1', port: 0 }, security: { allowedHosts: [], allowedOrigins: [] }, auth: { mode: 'none', authorizationServers: [] } } as unknown as GatewayConfig;
  const moduleRef = await Test.createTestingModule({
    imports: [AdminModule.register({ config: () => config, inbox: new Inbox() })],
    controllers: [ElsewhereController],
  }).compile();
  const app = moduleRef.createNestApplication({ bodyParser: false, logger: false });
  await app.listen(0, '127.0.0.1');
  apps.push(app);
  return `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
}

describe('AdminErrorFilter', () => {
  it('answers a path Express cannot decode under /admin with the admin error shape and headers', async () => {
    const baseUrl = await start();
    for (const [method, path] of [
      ['POST', '/admin/inbox/items/%E0%A4%A/answer'],
      ['GET', '/admin/%E0%A4%A'],
      ['GET', '/ADMIN/inbox/%ff'],
    ]) {
      const res = await fetch(`${baseUrl}${path}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });
      expect(res.status, path).toBe(400);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('cache-control'), path).toBe('no-store');
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
      expect(await res.json(), path).toEqual({ error: { message: 'bad request: the path is not valid percent-encoding' } });
    }
  });

  it('answers an /admin route that does not exist in the same shape', async () => {
    const baseUrl = await start();
    const res = await fetch(`${baseUrl}/admin/no-such-route`);
    expect(res.status).toBe(404);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.json()).toEqual({ error: { message: 'not found' } });
  });

  it('leaves requests outside /admin to Nest', async () => {
    const baseUrl = await start();
    const res = await fetch(`${baseUrl}/elsewhere/%E0%A4%A`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: 400 });
  });
});
