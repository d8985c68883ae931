// The /version document: reports release 1.29 so kubectl's dispatcher picks its 1.29 client.

export const SERVED_MINOR = '29'

export function versionInfo (): Record<string, string> {
  return {
    major: '1',
    minor: SERVED_MINOR,
    gitVersion: `v1.${SERVED_MINOR}.0-orch`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`
  }
}
