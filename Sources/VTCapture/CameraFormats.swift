import VTCore

/// A camera's pixel format, by its V4L2 four-character code.
public struct FourCC: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public init(_ text: StaticString) {
        precondition(text.utf8CodeUnitCount == 4, "a fourcc has four characters")
        let bytes = text.utf8Start
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    public static let yuyv = FourCC("YUYV")
    public static let nv12 = FourCC("NV12")
    public static let yu12 = FourCC("YU12")
    public static let mjpeg = FourCC("MJPG")
    public static let jpeg = FourCC("JPEG")
    public static let h264 = FourCC("H264")

    public var description: String {
        let scalars = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> ($0 * 8)) }
        return String(decoding: scalars.map { (32...126).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
            .trimmingSpaces()
    }
}

/// What a camera sends over the wire that vtrecord records from, as `--format` names it. Not
/// the layout of the pictures the source hands on (`PixelFormat`): MJPEG and YUYV arrive as
/// I420 after one conversion. H.264 is only stored as the camera sent it (`--encoder copy`),
/// never decoded, so it is chosen only when asked for.
public enum CameraPixelFormat: String, Sendable, CaseIterable {
    case yuyv, nv12, yu12, mjpeg, h264

    /// The driver codes that mean this format (some cameras say JPEG for Motion-JPEG).
    public var fourCCs: [FourCC] {
        switch self {
        case .yuyv: [.yuyv]
        case .nv12: [.nv12]
        case .yu12: [.yu12]
        case .mjpeg: [.mjpeg, .jpeg]
        case .h264: [.h264]
        }
    }

    public init?(fourCC: FourCC) {
        guard let match = Self.allCases.first(where: { $0.fourCCs.contains(fourCC) }) else { return nil }
        self = match
    }

    /// What the source hands the encoder: 4:2:0 as the camera gives it, or I420 after one
    /// conversion.
    public var deliveredPixelFormat: PixelFormat { self == .nv12 ? .nv12 : .i420 }

    public var isRaw420: Bool { self == .nv12 || self == .yu12 }
}

/// One size a format offers and the frame rates offered at it, fastest first.
public struct CameraFrameSize: Sendable, Equatable {
    public var size: FrameSize
    /// Discrete rates; a stepwise or continuous range is listed by its end points.
    public var frameRates: [FrameRate]

    public init(size: FrameSize, frameRates: [FrameRate]) {
        self.size = size
        self.frameRates = frameRates.sorted { $0.framesPerSecond > $1.framesPerSecond }
    }

    public var fastest: FrameRate? { frameRates.first }
}

/// One format a device offers (VIDIOC_ENUM_FMT), with its sizes and rates: what `formats`
/// lists and negotiation chooses from. Not the encoder's `VideoFormatDescription`.
public struct CameraFormatOffer: Sendable, Equatable {
    public var fourCC: FourCC
    public var name: String
    /// libv4l2 converts into this format from one the camera really sends.
    public var isEmulated: Bool
    public var isCompressed: Bool
    public var sizes: [CameraFrameSize]

    public init(fourCC: FourCC, name: String, isEmulated: Bool = false, isCompressed: Bool = false,
                sizes: [CameraFrameSize]) {
        self.fourCC = fourCC
        self.name = name
        self.isEmulated = isEmulated
        self.isCompressed = isCompressed
        self.sizes = sizes
    }

    public var pixelFormat: CameraPixelFormat? { CameraPixelFormat(fourCC: fourCC) }

    func rates(at size: FrameSize) -> [FrameRate] {
        sizes.first { $0.size == size }?.frameRates ?? []
    }
}

/// What the user asked for: nil fields mean "whatever suits".
public struct CameraRequest: Sendable, Equatable {
    public var format: CameraPixelFormat?
    public var size: FrameSize?
    public var frameRate: FrameRate?

    public init(format: CameraPixelFormat? = nil, size: FrameSize? = nil, frameRate: FrameRate? = nil) {
        self.format = format
        self.size = size
        self.frameRate = frameRate
    }

    /// Used for what the user left open: a common webcam mode.
    public static let defaultSize = FrameSize(width: 1280, height: 720)
    public static let defaultFrameRate = FrameRate.fps30
}

/// The format, size and rate to ask the driver for.
public struct CameraChoice: Sendable, Equatable {
    public var format: CameraFormatOffer
    public var size: FrameSize
    public var frameRate: FrameRate
}

/// Picks what to ask a camera for, from what it offers. Pure: the device is asked afterwards,
/// and may still adjust.
///
/// Order of preference at the asked size and rate: raw 4:2:0 (no conversion, no copy), then
/// YUYV (one conversion), then MJPEG (a decode per frame); but MJPEG wins when no raw format
/// reaches the asked rate, the usual case for 1080p30 over USB 2. Formats libv4l2 emulates
/// come last: they cost a conversion inside libv4l2 and are there for cameras whose native
/// formats (Bayer, vendor codes) vtrecord cannot read itself.
public enum CameraNegotiation {
    /// A rate counts as reaching the asked one within a per-mille, so 30000/1001 reaches 30.
    static func reaches(_ offered: FrameRate, _ asked: FrameRate) -> Bool {
        offered.framesPerSecond >= asked.framesPerSecond * 0.999
    }

    public static func choose(from formats: [CameraFormatOffer],
                              request: CameraRequest) -> CameraChoice? {
        // A camera's H.264 is recorded only as it comes (--encoder copy), so only when asked.
        let usable = formats.filter {
            $0.pixelFormat != nil && !$0.sizes.isEmpty && ($0.pixelFormat != .h264 || request.format == .h264)
        }
        guard !usable.isEmpty else { return nil }
        let askedRate = request.frameRate ?? CameraRequest.defaultFrameRate
        let askedSize = request.size ?? CameraRequest.defaultSize

        // An explicit format the camera offers is taken as it is; otherwise every format
        // competes (and the caller reports that the asked format was not available).
        var candidates = usable
        if let asked = request.format {
            let exact = usable.filter { $0.pixelFormat == asked }
            if !exact.isEmpty { candidates = exact }
        }
        let size = nearestSize(to: askedSize, in: candidates)
        let atSize = candidates.filter { !$0.rates(at: size).isEmpty }
        let ranked = atSize.sorted { rank($0) < rank($1) }

        let chosen: CameraFormatOffer
        if let first = ranked.first(where: { format in
            format.rates(at: size).contains { reaches($0, askedRate) }
        }) {
            chosen = first
        } else {
            // Nothing reaches the rate: the fastest at this size, preferred format on a tie.
            chosen = ranked.max { a, b in
                let ra = a.rates(at: size).first?.framesPerSecond ?? 0
                let rb = b.rates(at: size).first?.framesPerSecond ?? 0
                return ra != rb ? ra < rb : rank(a) > rank(b)
            }!
        }
        return CameraChoice(format: chosen, size: size,
                            frameRate: nearestRate(to: askedRate, in: chosen.rates(at: size)))
    }

    /// Lower is better: native raw 4:2:0, YUYV, MJPEG, then emulated formats in the same order.
    static func rank(_ format: CameraFormatOffer) -> Int {
        let base: Int
        switch format.pixelFormat {
        case .nv12?: base = 0
        case .yu12?: base = 1
        case .yuyv?: base = 2
        case .mjpeg?: base = 3
        case .h264?: base = 4
        case nil: base = 9
        }
        return base + (format.isEmulated ? 10 : 0)
    }

    /// The asked size if any candidate offers it, else the offered size closest in area and
    /// shape.
    static func nearestSize(to asked: FrameSize, in formats: [CameraFormatOffer]) -> FrameSize {
        let sizes = formats.flatMap { $0.sizes.map(\.size) }
        if sizes.contains(asked) { return asked }
        func distance(_ s: FrameSize) -> Int {
            abs(s.width - asked.width) + abs(s.height - asked.height)
        }
        return sizes.min { distance($0) < distance($1) || (distance($0) == distance($1) && $0.area > $1.area) }!
    }

    /// The offered rate nearest the asked one (the driver snaps the same way).
    static func nearestRate(to asked: FrameRate, in rates: [FrameRate]) -> FrameRate {
        rates.min {
            abs($0.framesPerSecond - asked.framesPerSecond) < abs($1.framesPerSecond - asked.framesPerSecond)
        } ?? asked
    }
}
