/** The part of http_ece (RFC 8188 content encoding, web-push's own dependency) the push test uses to decrypt. */
declare module "http_ece" {
  import type { ECDH } from "node:crypto";
  interface DecryptParams {
    version: "aes128gcm" | "aesgcm";
    privateKey: ECDH;
    authSecret: Buffer;
    dh?: string;
    salt?: string;
  }
  const ece: { decrypt(buffer: Buffer, params: DecryptParams): Buffer };
  export default ece;
}
