export { newSessionId, nowNs } from './clock.js';
export { Gateway, type GatewayOptions } from './gateway.js';
export { createLinkSource, LINK_ADDRESS_FORMS, LinkAddressError, QSPY_PORT } from './link-address.js';
export { LinkPublisher, type LinkPublisherOptions, type PublisherStats } from './link-publisher.js';
export type { LinkAdmission, LinkSink, LinkSource, LinkSourceKind } from './link-source.js';
export { LinkWriteError } from './link-source.js';
export { type LinkSpec, parseLinkSpecs } from './link-specs.js';
export { FileSource, type FileSourceOptions, type ReplayPace } from './sources/file.js';
export { type SerialBinding, SerialSource, type SerialSourceOptions, systemSerialBinding } from './sources/serial.js';
export { StdinSource } from './sources/stdin.js';
export { TcpConnectSource } from './sources/tcp-connect.js';
export { TcpListenSource } from './sources/tcp-listen.js';
export { UdpSource } from './sources/udp.js';
export {
  type DeviceControl,
  nearestUartRate,
  UART_UPLOAD_RULES,
  UartUpload,
  type UploadIo,
  type UploadOutcome,
  type UploadResult,
  type UploadRules,
} from './uart-upload.js';
export { IN_BAND_BREAK, UploadPoint } from './upload-point.js';
