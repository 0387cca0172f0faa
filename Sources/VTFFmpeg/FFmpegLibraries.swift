import CAVFormat

/// FFmpeg's libraries as vtrecord uses them: loaded on first use (see CAVFormat.h), with their
/// error codes in words.
public enum FFmpegLibraries {
    /// Loads libavformat, libavcodec, libavutil and libswresample; nil once they are there,
    /// else why one cannot be, as the end of a one-line message that names the package to install.
    public static func loadFailure() -> String? {
        var text = [CChar](repeating: 0, count: 512)
        guard vt_av_load(&text, text.count) != 0 else { return nil }
        let reason = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let soname = String(cString: vt_av_library_name())
        // Debian names the package after the soname's major version: libavformat.so.59 → libavformat59.
        let parts = soname.split(separator: ".")
        let library = parts.first.map(String.init) ?? soname
        let package = "\(library)\(parts.last ?? "")"
        return "FFmpeg's \(library), which this needs, cannot be loaded (\(reason)): install \(package)"
    }

    /// FFmpeg's text for one of its error codes.
    public static func errorText(_ status: Int32) -> String {
        var text = [CChar](repeating: 0, count: 128)
        guard vt_av_strerror(status, &text, text.count) >= 0 else { return "error \(status)" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
