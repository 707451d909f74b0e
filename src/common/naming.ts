/**
 * How catalog names become TypeScript names and output paths. Every target derives names only
 * through these functions, so two targets can never disagree on what an event is called.
 */

/** `OrderCreated` → `order-created`; `StockReserved` → `stock-reserved`. */
export function kebabCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase();
}

/** `order-created`, `order_created`, `orderCreated` → `OrderCreated`. */
export function pascalCase(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part.length > 0)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

/** `OrderCreated` → `orderCreated`. */
export function camelCase(name: string): string {
  const pascal = pascalCase(name);
  return pascal.length === 0 ? pascal : pascal[0]!.toLowerCase() + pascal.slice(1);
}

/** Folder of an event's generated files, relative to the output folder: `order/order-created`. */
export function eventModuleDir(event: { readonly domain: string; readonly name: string }): string {
  return `${kebabCase(event.domain)}/${kebabCase(event.name)}`;
}

/** Base TypeScript name of an event version: `OrderCreatedV2`. */
export function versionTypeName(event: { readonly name: string }, version: number): string {
  return `${pascalCase(event.name)}V${version}`;
}

/**
 * Names every target uses for one event version. Payload type `OrderCreatedV2Payload`, envelope
 * type `OrderCreatedV2Envelope`, constructor `orderCreatedV2`, descriptor `orderCreatedV2Descriptor`.
 */
export function versionNames(event: { readonly name: string }, version: number) {
  const base = versionTypeName(event, version);
  const lower = camelCase(base);
  return {
    payloadType: `${base}Payload`,
    envelopeType: `${base}Envelope`,
    constructorName: lower,
    descriptorName: `${lower}Descriptor`,
    validatorName: `validate${base}Payload`,
    /** The tolerant READER validator (unknown properties accepted). */
    readerName: `read${base}Payload`,
  } as const;
}

/** Names for the union over all versions of an event: `OrderCreatedPayload`, `OrderCreatedEnvelope`. */
export function eventNames(event: { readonly name: string }) {
  const base = pascalCase(event.name);
  return {
    payloadUnion: `${base}Payload`,
    envelopeUnion: `${base}Envelope`,
    /** Every version's descriptor, ascending: `orderCreatedDescriptors`. */
    descriptorList: `${camelCase(base)}Descriptors`,
  } as const;
}
