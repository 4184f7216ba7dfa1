import { ErrorCode, McpError } from '@switchboard/core';
import type { Item, RelayServices } from '../relay.types.js';

/**
 * `result` when `problems` found nothing; else the error the host gets instead. An SDK host
 * throws on such a result anyway, after the audit row said `ok`: the gateway says which
 * upstream sent it and what is wrong, with the code of an upstream's other protocol failures
 * (-32000, as for an answer JSON-RPC does not allow), and the row records that error.
 */
export function checkedResult(services: RelayServices, server: string, method: string, subject: string, result: Item, problems: string[] | undefined): Item {
  if (problems === undefined) return result;
  services.logger.warn({ upstream: server, method, subject, problems }, 'an upstream answered with a result its method does not allow; the host gets an error');
  throw new McpError(ErrorCode.ConnectionClosed, `Upstream '${server}' sent an invalid ${method} result for ${subject.slice(0, 200)}: ${problems.join('; ')}`);
}
