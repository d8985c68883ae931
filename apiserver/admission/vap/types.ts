// The shapes of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (admissionregistration v1beta1) as stored.

export interface LabelSelectorObj {
  matchLabels?: Record<string, string>
  matchExpressions?: Array<{ key: string, operator: string, values?: string[] }>
}

export interface NamedRule {
  apiGroups?: string[]
  apiVersions?: string[]
  resources?: string[]
  operations?: string[]
  scope?: string
  resourceNames?: string[]
}

export interface MatchResources {
  resourceRules?: NamedRule[]
  excludeResourceRules?: NamedRule[]
  namespaceSelector?: LabelSelectorObj
  objectSelector?: LabelSelectorObj
  matchPolicy?: 'Exact' | 'Equivalent'
}

export interface PolicySpec {
  paramKind?: { apiVersion?: string, kind?: string }
  matchConstraints?: MatchResources
  validations?: Array<{ expression: string, message?: string, messageExpression?: string, reason?: string }>
  failurePolicy?: 'Fail' | 'Ignore'
  auditAnnotations?: Array<{ key: string, valueExpression: string }>
  matchConditions?: Array<{ name: string, expression: string }>
  variables?: Array<{ name: string, expression: string }>
}

export interface ParamRef {
  name?: string
  namespace?: string
  selector?: LabelSelectorObj
  parameterNotFoundAction?: 'Allow' | 'Deny'
}

export interface BindingSpec {
  policyName?: string
  paramRef?: ParamRef
  matchResources?: MatchResources
  validationActions?: Array<'Deny' | 'Warn' | 'Audit'>
}

export interface Meta { name: string, generation?: number, uid?: string }
export interface PolicyObject { metadata: Meta, spec?: PolicySpec }
export interface BindingObject { metadata: Meta, spec?: BindingSpec }
