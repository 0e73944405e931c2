/**
 * The fidelity project's own service: a local stack with production limits, started as a child
 * process (service.ts says why not in this process), and an enterprise key for it.
 */
import type { TestProject } from 'vitest/node';
import { startService, type ServiceAddress } from './service.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    fidelityService: ServiceAddress;
  }
}

export default async function setup(project: TestProject) {
  const service = await startService();
  project.provide('fidelityService', { apiUrl: service.apiUrl, apiKey: service.apiKey });
  return () => service.stop();
}
