import Testing
@testable import VTCapture

/// Control names as scripts type them: a pure function, no camera.
@Suite struct CameraControlTests {
    @Test(arguments: [
        ("White Balance Temperature, Auto", "white_balance_temperature_auto"),
        ("Exposure (Absolute)", "exposure_absolute"),
        ("Exposure, Auto", "exposure_auto"),
        ("Power Line Frequency", "power_line_frequency"),
        ("  Brightness ", "brightness"),
        ("Gain, Automatic (AGC)", "gain_automatic_agc"),
        ("H.264 I-Frame Period", "h_264_i_frame_period"),
        ("Zoom--Absolute__", "zoom_absolute"),
        // Only ASCII letters and digits count, as for v4l2-ctl's isalnum() in the C locale.
        ("Schärfe", "sch_rfe"),
        ("", ""),
        ("(), ", ""),
    ])
    func namesAreNormalisedAsV4l2ctlSpellsThem(_ label: String, _ expected: String) {
        #expect(CameraControl.normalizedName(label) == expected)
    }
}
