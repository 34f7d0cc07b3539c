/**
 * `kernelseek doctor` and the checks `serve` and `gpu-worker` make before they start: every
 * setting, service and host requirement of a process's parts, each found ok, warn or fail with its
 * fix, all at once (docs/deploy.md).
 */
export { runChecks, formatReport, checkBeforeStart, StartRefusedError, type CheckReport, type RunChecksOptions } from './run-checks.js';
export { DOCTOR_ROLES, PARTS_OF_ROLE, type CheckLine, type CheckStatus, type DoctorRole, type Part } from './types.js';
