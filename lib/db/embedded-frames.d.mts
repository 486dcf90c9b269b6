// Types of embedded-frames.mjs (plain JavaScript for the worker thread), for the TypeScript that
// imports it: the tests.
export declare const PROTOCOL_3: number;
export declare const SSL_REQUEST: number;
export declare const GSSENC_REQUEST: number;
export declare const CANCEL_REQUEST: number;
export declare class FrameError extends Error {
  readonly sqlState: string;
  constructor(message: string, sqlState?: string);
}
export type Frame =
  | { kind: 'startup'; code: number; bytes: Buffer }
  | { kind: 'message'; type: string; bytes: Buffer }
  | { kind: 'oversize'; type: string; length: number };
export declare class MessageReader {
  constructor(opts: { maxMessageBytes: number });
  readonly buffered: number;
  push(chunk: Buffer): void;
  next(): Frame | null;
}
export declare function message(type: string, body?: Buffer): Buffer;
export declare function sslRefused(): Buffer;
export declare function authenticationOk(): Buffer;
export declare function parameterStatus(name: string, value: string): Buffer;
export declare function backendKeyData(pid: number, secret: number): Buffer;
export declare function readyForQuery(status?: 'I' | 'T' | 'E'): Buffer;
export declare function sync(): Buffer;
export declare function query(sql: string): Buffer;
export declare function errorResponse(e: { severity: 'ERROR' | 'FATAL'; code: string; message: string }): Buffer;
export declare function parseUnnamed(sql: string): Buffer;
export declare function bindUnnamed(): Buffer;
export declare function executeUnnamed(): Buffer;
export declare function statementText(bytes: Buffer): string | undefined;
