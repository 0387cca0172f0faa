/// colour_primaries, transfer_characteristics and matrix_coefficients of the VUI (code points
/// of ITU-T H.273, Tables E-3 to E-5).
///
/// The names are the ones FFmpeg prints (`bt709`, `smpte170m`, `bt470bg`), so a report can be
/// read next to ffprobe's output and other tools' options without a translation table.
public struct ColourDescription: Sendable, Equatable {
    public var colourPrimaries: Int
    public var transferCharacteristics: Int
    public var matrixCoefficients: Int

    public init(colourPrimaries: Int, transferCharacteristics: Int, matrixCoefficients: Int) {
        self.colourPrimaries = colourPrimaries
        self.transferCharacteristics = transferCharacteristics
        self.matrixCoefficients = matrixCoefficients
    }

    /// BT.709 primaries, transfer and matrix: HD video.
    public static let bt709 = ColourDescription(colourPrimaries: 1, transferCharacteristics: 1, matrixCoefficients: 1)

    public var colourPrimariesName: String { Self.name(colourPrimaries, Self.primariesNames) }
    public var transferCharacteristicsName: String { Self.name(transferCharacteristics, Self.transferNames) }
    public var matrixCoefficientsName: String { Self.name(matrixCoefficients, Self.matrixNames) }

    private static let primariesNames: [Int: String] = [
        1: "bt709", 2: "unknown", 4: "bt470m", 5: "bt470bg", 6: "smpte170m", 7: "smpte240m",
        8: "film", 9: "bt2020", 10: "smpte428", 11: "smpte431", 12: "smpte432", 22: "jedec-p22",
    ]

    private static let transferNames: [Int: String] = [
        1: "bt709", 2: "unknown", 4: "gamma22", 5: "gamma28", 6: "smpte170m", 7: "smpte240m",
        8: "linear", 9: "log100", 10: "log316", 11: "iec61966-2-4", 12: "bt1361e",
        13: "iec61966-2-1", 14: "bt2020-10", 15: "bt2020-12", 16: "smpte2084",
        17: "smpte428", 18: "arib-std-b67",
    ]

    private static let matrixNames: [Int: String] = [
        0: "gbr", 1: "bt709", 2: "unknown", 4: "fcc", 5: "bt470bg", 6: "smpte170m",
        7: "smpte240m", 8: "ycgco", 9: "bt2020nc", 10: "bt2020c", 11: "smpte2085",
        12: "chroma-derived-nc", 13: "chroma-derived-c", 14: "ictcp",
    ]

    private static func name(_ code: Int, _ table: [Int: String]) -> String {
        table[code] ?? "reserved (\(code))"
    }
}

/// video_signal_type of the VUI: the analogue format, the sample range and the colours.
public struct VideoSignalType: Sendable, Equatable {
    /// video_format (Table E-2); 5 means unspecified.
    public var videoFormat: Int
    /// True for full-range samples (0–255 for 8 bits, "pc"), false for video range
    /// (16–235, "tv").
    public var fullRange: Bool
    /// nil when colour_description_present_flag is 0.
    public var colourDescription: ColourDescription?

    public init(videoFormat: Int = 5, fullRange: Bool, colourDescription: ColourDescription? = nil) {
        self.videoFormat = videoFormat
        self.fullRange = fullRange
        self.colourDescription = colourDescription
    }
}
