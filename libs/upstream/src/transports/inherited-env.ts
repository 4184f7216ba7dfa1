/**
 * The variables a stdio upstream inherits from the daemon's environment; everything else it
 * gets comes from its config. A server needs a PATH and a home to work, but must not see the
 * daemon's secrets or NODE_OPTIONS. The same set the MCP SDK's stdio client uses, kept here
 * so that the daemon does not load the whole SDK for one list.
 */
const INHERITED_VARIABLES =
  process.platform === 'win32'
    ? ['APPDATA', 'COMSPEC', 'HOMEDRIVE', 'HOMEPATH', 'LOCALAPPDATA', 'PATH', 'PATHEXT', 'PROCESSOR_ARCHITECTURE',
       'PROGRAMDATA', 'PROGRAMFILES', 'PROGRAMFILES(X86)', 'PROGRAMW6432', 'SYSTEMDRIVE', 'SYSTEMROOT', 'TEMP',
       'USERNAME', 'USERPROFILE', 'WINDIR']
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

export function inheritedEnvironment(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_VARIABLES) {
    const value = source[key];
    // A value starting with "()" is an exported shell function: never pass one on (Shellshock).
    if (value === undefined || value.startsWith('()')) continue;
    env[key] = value;
  }
  return env;
}
