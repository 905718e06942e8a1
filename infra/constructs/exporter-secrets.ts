/**
 * The secrets the export function reads: the service's token, and the pseudonymization key when a table
 * pseudonymizes. Each is imported (by name, complete or partial ARN) or created by the stack.
 */
import { RemovalPolicy } from 'aws-cdk-lib'
import { type CfnSecret, type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager'
import type { Construct } from 'constructs'
import type { DeploymentConfig } from '../deployment-config.ts'
import { acknowledgeFinding } from '../nag.ts'
import { secretReference } from './exporter-settings.ts'

/** The secret `nameOrArn` names, imported as construct `id`; undefined when the stack is to create it. */
const importedSecret = (scope: Construct, id: string, nameOrArn: string | undefined): ISecret | undefined => {
  const reference = secretReference(nameOrArn)
  switch (reference.kind) {
    case 'name':
      return Secret.fromSecretNameV2(scope, id, reference.name)
    case 'completeArn':
      return Secret.fromSecretCompleteArn(scope, id, reference.arn)
    case 'partialArn':
      return Secret.fromSecretPartialArn(scope, id, reference.arn)
    case 'create':
      return undefined
  }
}

/** The token's secret: imported, or created empty for the operator to fill after deploy. */
export const tokenSecret = (scope: Construct, secret: DeploymentConfig['secret'], createdName: string): ISecret => {
  const imported = importedSecret(scope, 'TokenSecret', secret.nameOrArn)
  if (imported) return imported
  const created = new Secret(scope, 'TokenSecret', {
    secretName: createdName,
    // The token is issued by hand by the service's administrator: deleting the stack should not destroy it.
    removalPolicy: secret.retainOnDelete ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    description:
      'API token of the inventory service for the exporter. Fill it after deploy: the plain token, or JSON {"token": "...", "baseUrl": "..."} ' +
      '(aws secretsmanager put-secret-value --secret-id <this ARN> --secret-string <token>).',
  })
  // Created empty (CloudFormation creates no value when neither property is set): a random value would look like a token.
  ;(created.node.defaultChild as CfnSecret).addPropertyDeletionOverride('GenerateSecretString')
  acknowledgeFinding(
    created,
    'AwsSolutions-SMG4',
    'The secret holds an API token issued by an administrator of the inventory service; it cannot be rotated by a Lambda, it is replaced by hand (docs/operations.md, Rotating the token).',
  )
  return created
}

/**
 * The pseudonymization key's secret: imported, or created with a random value. It is kept when the stack is
 * deleted and never rotated by a schedule: a new key changes every pseudonym, which breaks joins with history.
 */
export const pseudonymizationKeySecret = (
  scope: Construct,
  nameOrArn: string | undefined,
  createdName: string,
): ISecret => {
  const imported = importedSecret(scope, 'PseudonymizationSecret', nameOrArn)
  if (imported) return imported
  const created = new Secret(scope, 'PseudonymizationSecret', {
    secretName: createdName,
    removalPolicy: RemovalPolicy.RETAIN,
    description:
      'HMAC key of the pseudonymized columns (tables[].columns.pseudonymize). Only the exporter reads it; whoever can read it can test a guessed value against a pseudonym. Replacing it changes every pseudonym (docs/personal-data.md).',
    generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
  })
  acknowledgeFinding(
    created,
    'AwsSolutions-SMG4',
    'The pseudonymization key must stay the same for pseudonyms to join across dates; rotating it is a deliberate, documented step (docs/personal-data.md), never a schedule.',
  )
  return created
}
