/** The part of avsc this project loads (lib/containers.js): its container file streams, typed as avsc types them. */
declare module 'avsc/lib/containers.js' {
  import type { streams } from 'avsc'

  const containers: {
    readonly streams: {
      readonly BlockEncoder: typeof streams.BlockEncoder
      readonly BlockDecoder: typeof streams.BlockDecoder
    }
  }
  export default containers
}
