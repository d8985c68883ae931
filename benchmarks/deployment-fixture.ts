// The container of the Deployment-sized objects the apply and strategic-merge-patch benchmarks use.

/** A container with two ports, `envCount` env entries, resources and two volume mounts. */
export function benchContainer (name: string, image: string, envCount: number): { [key: string]: any } {
  return {
    name,
    image,
    ports: [{ containerPort: 8080, protocol: 'TCP', name: 'http' }, { containerPort: 9090, protocol: 'TCP', name: 'metrics' }],
    env: Array.from({ length: envCount }, (_, i) => ({ name: `SETTING_${i}`, value: `value-${i}-${'x'.repeat(20)}` })),
    resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
    volumeMounts: [{ name: 'config', mountPath: '/etc/app' }, { name: 'data', mountPath: '/var/lib/app' }]
  }
}
