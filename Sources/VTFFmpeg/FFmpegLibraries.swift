import CAVFormat

/// FFmpeg's libraries as vtrecord uses them: loaded on first use (see CAVFormat.h), with their
/// error codes in words.
public enum FFmpegLibraries {
    /// Loads libavformat (and with it libavcodec and libavutil); nil once they are there, else
    /// why they cannot be, as the end of a one-line message that names the package to install.
    public static func loadFailure() -> String? {
        var text = [CChar](repeating: 0, count: 512)
        guard vt_av_load(&text, text.count) != 0 else { return nil }
        let reason = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let soname = String(cString: vt_av_library_name())
        // Debian names the package after the soname's major version: libavformat.so.59 → libavformat59.
        let parts = soname.split(separator: ".")
        let package = "\(parts.first ?? "")\(parts.last ?? "")"
        return "FFmpeg's libavformat, which this needs, cannot be loaded (\(reason)): install \(package)"
    }

    /// FFmpeg's text for one of its error codes.
    public static func errorText(_ status: Int32) -> String {
        var text = [CChar](repeating: 0, count: 128)
        vt_av_strerror(status, &text, text.count)
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
