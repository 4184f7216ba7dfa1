export {
  assertFixturesBuilt,
  bulkFixturePath,
  conformanceFixturePath,
  fixturePath,
  startConformanceHttpFixture,
  startHttpFixture,
  type ConformanceFixtureKind,
  type FixtureExit,
  type FixtureKind,
  type HttpFixture,
  type StartHttpFixtureOptions,
} from './fixture-process.js';
export { type FixtureStatsReport, LOG_LEVELS } from './fixtures/fixture-control-tools.js';
export { BLOB_URI, HELLO_URI, ITEM_IDS, ITEM_TEMPLATE } from './fixtures/fixture-content.js';
export {
  DEFAULT_FIXTURE_OPTIONS,
  fixtureOptionsFromEnv,
  LONG_TOOL_NAME,
  type FixtureOptions,
} from './fixtures/fixture-options.js';
export { createFixtureServer, FIXTURE_VERSION } from './fixtures/fixture-server.js';
export { FixtureStats } from './fixtures/fixture-session.js';
export { connectToFixture, type FixtureConnection } from './fixture-client.js';
export {
  CONFORMANCE_SERVER_NAME,
  CONFORMANCE_SERVER_VERSION,
  createConformanceServer,
} from './conformance/conformance-server.js';
export { serveStreamableHttp, TEST_CERT_PATH, type StreamableHttpHost } from './fixtures/http-support.js';
