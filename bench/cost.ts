/**
 * What exporting a GB of CSV costs in Lambda: the duration at a measured throughput times the memory, at the
 * arm64 price. Requests ($0.20 per million) are left out: one invocation exports many tables.
 */

/**
 * Lambda arm64 duration price in US East (N. Virginia), first pricing tier (up to 7.5 billion GB-seconds a month),
 * in USD per GB-second; unchanged since arm64 launched in September 2021 (aws.amazon.com/lambda/pricing, as last
 * checked 2026-05). Other regions differ by a few percent.
 */
export const LAMBDA_ARM64_USD_PER_GB_SECOND = 0.0000133334

/** USD per GB (10^9 bytes) of CSV for a function of `memoryMb` MB exporting at `mbPerSecond` (10^6 bytes/s). */
export const lambdaCostPerGb = (mbPerSecond: number, memoryMb: number): number =>
  (1000 / mbPerSecond) * (memoryMb / 1024) * LAMBDA_ARM64_USD_PER_GB_SECOND
