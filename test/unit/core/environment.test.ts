/** The Lambda's settings read from its environment: here, the memory size that decides how many threads parse. */
import { describe, expect, it } from 'vitest'
import { parseLambdaSettings } from '../../../functions/export/core/environment.ts'

const ENVIRONMENT = {
  EXPORT_CONFIG: JSON.stringify({
    source: { baseUrl: 'https://inventory.example.com' },
    tables: [{ id: '1', name: 'devices' }],
  }),
  WAREHOUSE_BUCKET: 'acme-inventory-warehouse',
  TOKEN_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:inventory-token',
}

describe('the Lambda settings', () => {
  it("take the function's memory size from AWS_LAMBDA_FUNCTION_MEMORY_SIZE, which Lambda sets", () => {
    expect(parseLambdaSettings({ ...ENVIRONMENT, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '3538' }).memoryMb).toBe(3538)
  })

  it('turn the memory size into the number of parse threads once, by the vCPUs it buys', () => {
    const withMemory = (mb: string) => ({ ...ENVIRONMENT, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: mb })
    expect(parseLambdaSettings(withMemory('1769'), undefined, 6).parseThreads).toBe(0)
    expect(parseLambdaSettings(withMemory('3538'), undefined, 6).parseThreads).toBe(1)
    expect(parseLambdaSettings(withMemory('10240'), undefined, 6).parseThreads).toBe(5)
    expect(parseLambdaSettings(ENVIRONMENT, undefined, 4).parseThreads).toBe(4)
  })

  it('have no memory size outside Lambda, or when the variable is not a number', () => {
    expect(parseLambdaSettings(ENVIRONMENT).memoryMb).toBeUndefined()
    expect(parseLambdaSettings({ ...ENVIRONMENT, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: 'lots' }).memoryMb).toBeUndefined()
  })
})
