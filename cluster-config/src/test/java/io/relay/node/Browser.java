package io.relay.node;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Function;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/** Headless Debian Chromium driven through Debian's chromedriver, for the operator page tests. */
final class Browser implements AutoCloseable {
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  /** Screenshots of a test run; docs/ holds copies. */
  static final Path SCREENSHOTS = Path.of("target", "screenshots");

  final ChromeDriver driver;
  private final Path profile;

  Browser() {
    if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) {
      throw new AssertionError("the browser tests need Debian's Chromium: apt-get install chromium chromium-driver");
    }
    try {
      profile = Files.createTempDirectory("relay-chromium");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ChromeOptions options =
        new ChromeOptions()
            .setBinary(CHROMIUM.toFile())
            .addArguments(
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1400,900", "--user-data-dir=" + profile.toAbsolutePath());
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
    driver = new ChromeDriver(service, options);
  }

  /** Waits until {@code condition} gives a non-null, non-false value; the message says what did not happen. */
  <T> T await(String what, Duration timeout, Function<WebDriver, T> condition) {
    return new WebDriverWait(driver, timeout).withMessage("waiting until " + what).until(condition);
  }

  void screenshot(String name) {
    try {
      Files.createDirectories(SCREENSHOTS);
      File shot = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE);
      Files.copy(shot.toPath(), SCREENSHOTS.resolve(name), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    driver.quit();
  }
}
