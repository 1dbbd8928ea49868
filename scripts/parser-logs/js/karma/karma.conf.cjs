// Karma in headless Chromium with mocha; the reporter comes from REPORTER (mocha, progress, dots), the
// spec file from SPEC.
module.exports = (config) => {
  config.set({
    frameworks: ["mocha"],
    files: [process.env.SPEC || "calc.spec.js"],
    browsers: ["ChromiumHeadlessNoSandbox"],
    customLaunchers: {
      ChromiumHeadlessNoSandbox: { base: "ChromeHeadless", flags: ["--no-sandbox"] },
    },
    reporters: [process.env.REPORTER || "mocha"],
    singleRun: true,
    colors: process.env.COLOURS === "1",
    logLevel: config.LOG_INFO,
  });
};
