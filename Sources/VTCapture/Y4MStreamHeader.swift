import VTCore

/// The first line of a Y4M stream: `YUV4MPEG2` followed by space-separated tags
/// (W width, H height, F rate, I interlacing, A sample aspect, C colour space, X extensions).
///
/// The format is described in the mjpegtools `yuv4mpeg(5)` manual; ffmpeg's yuv4mpegpipe
/// muxer is the writer it most often comes from.
struct Y4MStreamHeader: Equatable {
    /// How a Y4M colour space maps onto the pictures vtrecord hands on.
    enum Sampling: Equatable {
        /// 8-bit 4:2:0, stored as I420.
        case yuv420
        /// 8-bit luma only; delivered as I420 with neutral chroma.
        case mono
    }

    enum Interlacing: Equatable {
        case progressive, topFieldFirst, bottomFieldFirst, mixed
    }

    /// Longest header line accepted: real headers are under 100 bytes, so a longer one means
    /// the input is not Y4M, and the cap keeps a binary file from being buffered whole.
    static let maximumLength = 4096
    static let signature: [UInt8] = Array("YUV4MPEG2".utf8)
    /// Sizes above this are refused: no H.264 level goes past it, and the cap keeps a damaged
    /// header from asking for gigabytes of buffers.
    static let maximumDimension = 16384

    var width: Int
    var height: Int
    /// nil for a missing `F` tag or `F0:0` (unknown).
    var frameRate: FrameRate?
    /// nil for a missing `A` tag or `A0:0` (unknown).
    var sampleAspectRatio: SampleAspectRatio?
    var interlacing: Interlacing
    var sampling: Sampling
    /// From the `XCOLORRANGE=FULL|LIMITED` extension ffmpeg writes; nil when absent.
    var fullRange: Bool?
    /// The `C` tag as written, or nil when the header has none.
    var colourSpaceTag: String?


    /// Parses a header line, without its terminating newline. `path` only names the input
    /// in errors.
    static func parse(_ line: [UInt8], path: String) throws(CaptureError) -> Y4MStreamHeader {
        guard line.starts(with: signature) else { throw .notY4M(path: path) }
        func malformed(_ problem: String) -> CaptureError {
            .malformedHeader(path: path, problem: problem)
        }
        let rest = line.dropFirst(signature.count)
        guard rest.isEmpty || rest.first == UInt8(ascii: " ") else {
            throw malformed("\"YUV4MPEG2\" must be followed by a space")
        }
        var width: Int?
        var height: Int?
        var header = Y4MStreamHeader(width: 0, height: 0, frameRate: nil, sampleAspectRatio: nil,
                                     interlacing: .progressive, sampling: .yuv420, fullRange: nil,
                                     colourSpaceTag: nil)
        // Tags are separated by single spaces; tolerate runs of spaces as ffmpeg does.
        for field in rest.split(separator: UInt8(ascii: " ")) {
            let tag = String(decoding: field, as: UTF8.self)
            let value = String(tag.dropFirst())
            switch tag.first {
            case "W": width = try dimension(value, tag: tag, name: "width", malformed)
            case "H": height = try dimension(value, tag: tag, name: "height", malformed)
            case "F":
                guard let (n, d) = ratio(value) else {
                    throw malformed("frame rate \"\(tag)\" is not of the form F30:1")
                }
                if n == 0 && d == 0 { break }
                guard let rate = FrameRate(numerator: n, denominator: d) else {
                    throw malformed("frame rate \"\(tag)\" is out of range")
                }
                header.frameRate = rate
            case "A":
                guard let (n, d) = ratio(value) else {
                    throw malformed("sample aspect \"\(tag)\" is not of the form A1:1")
                }
                if n == 0 && d == 0 { break }
                guard n > 0, d > 0 else { throw malformed("sample aspect \"\(tag)\" is not positive") }
                header.sampleAspectRatio = SampleAspectRatio(width: n, height: d)
            case "I":
                switch value {
                case "p", "?": header.interlacing = .progressive
                case "t": header.interlacing = .topFieldFirst
                case "b": header.interlacing = .bottomFieldFirst
                case "m": header.interlacing = .mixed
                default: throw malformed("interlacing \"\(tag)\" is not one of Ip, It, Ib, Im")
                }
            case "C":
                header.colourSpaceTag = value
                header.sampling = try sampling(value, path: path)
            case "X":
                switch value {
                case "COLORRANGE=FULL": header.fullRange = true
                case "COLORRANGE=LIMITED": header.fullRange = false
                default: break
                }
            default:
                // Unknown tags are skipped so that headers from newer writers still play.
                break
            }
        }
        guard let width else { throw malformed("no W (width) tag") }
        guard let height else { throw malformed("no H (height) tag") }
        header.width = width
        header.height = height
        return header
    }

    /// Bytes of one picture as the stream stores it, which for mono is the luma plane only.
    var pictureSize: Int {
        switch sampling {
        case .yuv420: PixelFormat.i420.imageSize(width: width, height: height)
        case .mono: width * height
        }
    }

    /// Colour spaces with 8-bit 4:2:0 samples, differing only in chroma siting, which the
    /// encoder does not need; a missing C tag means 420jpeg by the specification.
    private static let yuv420Names: Set<String> = ["420", "420jpeg", "420paldv", "420mpeg2"]

    private static func sampling(_ name: String, path: String) throws(CaptureError) -> Sampling {
        if yuv420Names.contains(name) { return .yuv420 }
        if name == "mono" { return .mono }
        throw .unsupportedColourSpace(path: path, colourSpace: name)
    }

    private static func dimension(_ value: String, tag: String, name: String,
                                  _ malformed: (String) -> CaptureError) throws(CaptureError) -> Int {
        guard let n = Int(value), n > 0 else {
            throw malformed("\(name) \"\(tag)\" is not a positive number")
        }
        guard n <= maximumDimension else {
            throw malformed("\(name) \"\(tag)\" is larger than \(maximumDimension)")
        }
        return n
    }

    private static func ratio(_ value: String) -> (Int, Int)? {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), n >= 0, d >= 0 else {
            return nil
        }
        return (n, d)
    }
}
