/** The `limits` section as the configuration's defaults make it, for tests that call a stage directly. */
import { LimitsConfigSchema } from '../../functions/export/core/config/schema.ts'

export const DEFAULT_LIMITS = LimitsConfigSchema.parse({})
