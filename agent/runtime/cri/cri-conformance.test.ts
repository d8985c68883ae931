// The shared runtime conformance suite run by the CRI client against real containerd with busybox images.
import t from 'tap'
import { runRuntimeConformance, type RuntimeCommand } from '../conformance.js'
import { RuntimeError } from '../runtime.js'
import { createCriRuntime } from './cri-runtime.js'
import { conformanceImage, ensureContainerd } from './containerd-for-tests.js'

const env = await ensureContainerd()
if (!env.ok) {
  if (!env.skippable) t.fail(`containerd is required (as root or with CI=true): ${env.reason}`)
  else t.comment(`skipping the containerd conformance run: ${env.reason}`)
} else {
  const endpoint = env.endpoint
  const sh = (script: string): RuntimeCommand => ({ command: ['sh', '-c'], args: [script] })
  // Single-quotes a value for sh.
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

  await runRuntimeConformance(t, {
    newRuntime: async () => createCriRuntime({ runtimeEndpoint: endpoint, requestTimeoutMs: 30_000 }),
    fixtures: {
      image: conformanceImage,
      // The suite removes the image once; .ci/containerd.sh imports whatever is missing.
      ensureImage: async () => {
        const again = await ensureContainerd()
        if (!again.ok) throw new RuntimeError('Unavailable', again.reason)
      },
      // Nothing listens on port 1, so resolving fails at once with no registry access needed.
      missingImage: '127.0.0.1:1/orch/none:1',
      hostNetwork: true,
      commands: {
        printLines: lines => sh(lines.map(l => `echo ${q(l)}`).join('; ')),
        printStderr: line => sh(`echo ${q(line)} >&2`),
        exit: code => sh(`exit ${code}`),
        sleep: () => ({ command: ['sleep'], args: ['3600'] }),
        printEnv: name => sh(`printf '%s\\n' "$${name}"`),
        readFile: path => ({ command: ['cat'], args: [path] })
      }
    }
  })
}
