/** Whether a process of this host still runs: tells a killed run's leftovers (spools, locks, leases) from a live one's. */

/** Signal 0 checks for the process without touching it; EPERM means it exists under another user. */
export const processIsAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
