import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { PinoNestLogger } from './nest-logger.js';

/** A PinoNestLogger over a real pino logger at `level`, and the lines it wrote. */
function capture(level: string): { nest: PinoNestLogger; lines: () => { level: number; context?: string; msg: string }[] } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const logger = pino({ level, base: undefined }, sink);
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; context?: string; msg: string });
  return { nest: new PinoNestLogger(logger), lines };
}

describe('PinoNestLogger', () => {
  it("keeps Nest's start-up narration out of the info log", () => {
    const { nest, lines } = capture('info');
    nest.log('Starting Nest application...', 'NestFactory');
    nest.log('AppModule dependencies initialized', 'InstanceLoader');
    nest.log('HealthController {/}:', 'RoutesResolver');
    nest.log('Mapped {/mcp, POST} route', 'RouterExplorer');
    nest.log('Nest application successfully started', 'NestApplication');
    expect(lines()).toEqual([]);
  });

  it('still writes that narration at debug, with its context', () => {
    const { nest, lines } = capture('debug');
    nest.log('Mapped {/mcp, POST} route', 'RouterExplorer');
    expect(lines()).toEqual([{ level: 20, time: expect.any(Number), context: 'RouterExplorer', msg: 'Mapped {/mcp, POST} route' }]);
  });

  it('writes any other message at its own level', () => {
    const { nest, lines } = capture('info');
    nest.log('something an operator should see', 'SomeService');
    nest.log('no context at all');
    nest.warn('a warning', 'RouterExplorer');
    nest.error('a failure', 'stack trace', 'NestApplication');
    expect(lines().map((line) => [line.level, line.msg])).toEqual([
      [30, 'something an operator should see'],
      [30, 'no context at all'],
      [40, 'a warning'],
      [50, 'a failure'],
    ]);
  });
});
