import Foundation

extension FakeVADevice {
    /// What the driver saw of one process, decoded from its JSON report (field for field; see
    /// FAKE_VA_REPORT in Tests/FakeVA/fake_va.c). Misc parameters hold the last value received
    /// and how many came; a missing one is nil.
    public struct Report: Decodable, Sendable {
        public let pid: Int
        /// vaTerminate was called; `liveObjects` is what the client had not destroyed by then.
        public let terminated: Bool
        public let vendor: String
        /// The config of the context that encoded last.
        public let config: Config?
        public let frames: Int
        /// Pictures encoded at each quality level in force (the last
        /// VAEncMiscParameterTypeQualityLevel the client sent); 0 is the driver's default, also
        /// before any level was sent. Levels with no picture are left out.
        public let picturesByQualityLevel: [Int: Int]
        public let idrPictures: Int
        public let iSlices: Int
        public let pSlices: Int
        public let bSlices: Int
        public let lastQp: LastQP
        public let packedHeaders: PackedHeaders
        public let rateControl: RateControl?
        public let hrd: HRD?
        public let frameRate: FrameRate?
        public let qualityLevel: QualityLevel?
        public let sequence: Sequence?
        public let images: Images
        public let codedBufferOverflows: Int
        /// What decode contexts (VAEntrypointVLD) did.
        public let decode: Decode
        /// Successful vaCreateConfig calls, and the first 32 of them.
        public let configsCreated: Int
        public let configs: [ConfigMade]
        public let liveObjects: LiveObjects?
        public let violationCount: Int
        public let violations: [String]

        public struct Config: Decodable, Sendable {
            /// "constrained_baseline", "main" or "high".
            public let profile: String
            /// "slice" or "lp".
            public let entrypoint: String
            /// "cqp", "cbr", "vbr" or "icq".
            public let rateControl: String
            /// The EncPackedHeaders value the client declared (VA_ENC_PACKED_HEADER_* bits).
            public let packedHeaders: UInt32
            /// The attributes passed to vaCreateConfig, in order.
            public let requestedAttributes: [Attribute]
        }

        public struct Attribute: Decodable, Sendable, Equatable {
            /// A VAConfigAttribType.
            public let type: Int
            public let value: UInt32
        }

        /// SliceQPY of the last slice of each type; -1 when there was none.
        public struct LastQP: Decodable, Sendable, Equatable {
            public let i: Int
            public let p: Int
            public let b: Int

            public init(i: Int, p: Int, b: Int) {
                self.i = i
                self.p = p
                self.b = b
            }
        }

        /// Packed headers received, by VAEncPackedHeaderType.
        public struct PackedHeaders: Decodable, Sendable, Equatable {
            public let sequence: Int
            public let picture: Int
            public let slice: Int
            public let rawData: Int

            public init(sequence: Int, picture: Int, slice: Int, rawData: Int) {
                self.sequence = sequence
                self.picture = picture
                self.slice = slice
                self.rawData = rawData
            }
        }

        /// VAEncMiscParameterRateControl.
        public struct RateControl: Decodable, Sendable, Equatable {
            public let count: Int
            public let bitsPerSecond: UInt32
            public let targetPercentage: UInt32
            public let windowSize: UInt32
            public let initialQp: UInt32
            public let minQp: UInt32
            public let maxQp: UInt32
            public let basicUnitSize: UInt32
            public let icqQualityFactor: UInt32
            public let qualityFactor: UInt32
            public let targetFrameSize: UInt32
            public let rcFlags: RateControlFlags
        }

        public struct RateControlFlags: Decodable, Sendable, Equatable {
            public let value: UInt32
            public let reset: UInt32
            public let disableFrameSkip: UInt32
            public let disableBitStuffing: UInt32
            public let mbRateControl: UInt32
            public let temporalId: UInt32
            public let frameToleranceMode: UInt32
        }

        /// VAEncMiscParameterHRD.
        public struct HRD: Decodable, Sendable, Equatable {
            public let count: Int
            public let bufferSize: UInt32
            public let initialBufferFullness: UInt32

            public init(count: Int, bufferSize: UInt32, initialBufferFullness: UInt32) {
                self.count = count
                self.bufferSize = bufferSize
                self.initialBufferFullness = initialBufferFullness
            }
        }

        /// VAEncMiscParameterFrameRate: the raw field and what it means.
        public struct FrameRate: Decodable, Sendable, Equatable {
            public let count: Int
            public let framerate: UInt32
            public let numerator: UInt32
            public let denominator: UInt32

            public init(count: Int, framerate: UInt32, numerator: UInt32, denominator: UInt32) {
                self.count = count
                self.framerate = framerate
                self.numerator = numerator
                self.denominator = denominator
            }
        }

        public struct QualityLevel: Decodable, Sendable, Equatable {
            public let count: Int
            public let qualityLevel: UInt32
        }

        /// The last VAEncSequenceParameterBufferH264, in part.
        public struct Sequence: Decodable, Sendable, Equatable {
            public let bitsPerSecond: UInt32
            public let intraPeriod: UInt32
            public let intraIdrPeriod: UInt32
            public let ipPeriod: UInt32
            public let maxNumRefFrames: UInt32
            public let timeScale: UInt32
            public let numUnitsInTick: UInt32
            public let levelIdc: UInt32
            public let widthInMbs: UInt32
            public let heightInMbs: UInt32
        }

        /// How pictures reached surfaces: vaDeriveImage, or vaCreateImage + vaPutImage.
        public struct Images: Decodable, Sendable, Equatable {
            public let derived: Int
            public let created: Int
            public let put: Int
            public let got: Int
        }

        /// Decoding: pictures decoded (every macroblock I_PCM, written into the render target),
        /// pictures refused with a violation at vaEndPicture, and the slices that decoded.
        public struct Decode: Decodable, Sendable, Equatable {
            /// Of the context that decoded last; nil before any vaEndPicture of a decode context.
            public let profile: String?
            public let pictures: Int
            public let failedPictures: Int
            public let iSlices: Int
            public let pSlices: Int
            public let bSlices: Int
            public let cavlcSlices: Int
            public let cabacSlices: Int
            public let macroblocks: Int
        }

        public struct ConfigMade: Decodable, Sendable, Equatable {
            /// "constrained_baseline", "main" or "high".
            public let profile: String
            /// "vld", "slice" or "lp".
            public let entrypoint: String

            public init(profile: String, entrypoint: String) {
                self.profile = profile
                self.entrypoint = entrypoint
            }
        }

        public struct LiveObjects: Decodable, Sendable, Equatable {
            public let configs: Int
            public let contexts: Int
            public let surfaces: Int
            public let buffers: Int
            public let images: Int

            /// Nothing left: the client destroyed everything it created.
            public var none: Bool { configs == 0 && contexts == 0 && surfaces == 0 && buffers == 0 && images == 0 }
        }
    }
}
