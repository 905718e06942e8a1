/** Where the exporter's functions run when `deployment.vpc` is set: the VPC, its subnets and security groups. */
import { type ISecurityGroup, type ISubnet, type IVpc, SecurityGroup, Subnet, Vpc } from 'aws-cdk-lib/aws-ec2'
import type { Construct } from 'constructs'
import type { DeploymentConfig } from '../deployment-config.ts'
import { acknowledgeFinding } from '../nag.ts'

export interface FunctionNetwork {
  readonly vpc: IVpc
  readonly vpcSubnets: { readonly subnets: ISubnet[] }
  readonly securityGroups: ISecurityGroup[]
}

/** The imported VPC, subnets and security groups, by id. */
export const functionNetwork = (scope: Construct, vpc: NonNullable<DeploymentConfig['vpc']>): FunctionNetwork => {
  return {
    vpc: Vpc.fromVpcAttributes(scope, 'Vpc', { vpcId: vpc.vpcId, availabilityZones: [...vpc.availabilityZones] }),
    vpcSubnets: { subnets: vpc.subnetIds.map((subnetId) => importSubnet(scope, subnetId)) },
    securityGroups: vpc.securityGroupIds.map((sg) =>
      SecurityGroup.fromSecurityGroupId(scope, `SecurityGroup-${sg}`, sg, { mutable: false }),
    ),
  }
}

const importSubnet = (scope: Construct, subnetId: string): ISubnet => {
  const subnet = Subnet.fromSubnetId(scope, `Subnet-${subnetId}`, subnetId)
  // aws-cdk-lib 2.257 spells the prefix of its own warnings `annotation::` (2.262.1 and later, `Annotation::`).
  acknowledgeFinding(
    subnet,
    'annotation::@aws-cdk/aws-ec2:noSubnetRouteTableId',
    'The function is only placed in this subnet by id; nothing in the stack reads or changes its route table.',
  )
  return subnet
}
