import { describe, expect, it } from "vitest";
import { checkImageTemplate, DEFAULT_IMAGE_TEMPLATE, imageName } from "../../src/datasets/image-name.js";

describe("imageName", () => {
  it("derives SWE-bench's Docker Hub image, with __ replaced and lowercased", () => {
    expect(imageName({ instance_id: "django__django-11099" })).toBe(
      "docker.io/swebench/sweb.eval.x86_64.django_1776_django-11099:latest",
    );
    expect(imageName({ instance_id: "SWE-Gym__Foo-1" })).toBe(
      "docker.io/swebench/sweb.eval.x86_64.swe-gym_1776_foo-1:latest",
    );
  });

  it("prefers the record's image_name, then docker_image, then SWE-bench 5's image, as stored", () => {
    expect(imageName({ instance_id: "a__b-1", image: "swebench/sweb.eval.x86_64.a_1776_b-1:v5" })).toBe(
      "swebench/sweb.eval.x86_64.a_1776_b-1:v5",
    );
    expect(imageName({ instance_id: "a__b-1", docker_image: "d", image: "i" })).toBe("d");
    expect(imageName({ instance_id: "a__b-1", image_name: "ghcr.io/X/y:1", docker_image: "z" })).toBe(
      "ghcr.io/X/y:1",
    );
    expect(imageName({ instance_id: "a__b-1", docker_image: "swerebench/sweb.eval.x86_64.a_1776_b-1" })).toBe(
      "swerebench/sweb.eval.x86_64.a_1776_b-1",
    );
    expect(imageName({ instance_id: "a__b-1", image_name: "", docker_image: null })).toBe(
      "docker.io/swebench/sweb.eval.x86_64.a_1776_b-1:latest",
    );
  });

  it("fills a custom template for another registry or namespace", () => {
    const template = "registry.example.com/mirror/{id_docker_compatible}:v1-{instance_id}";
    expect(imageName({ instance_id: "Astropy__astropy-1" }, template)).toBe(
      "registry.example.com/mirror/astropy_1776_astropy-1:v1-astropy__astropy-1",
    );
    expect(imageName({ instance_id: "a__b-1", image_name: "own:1" }, template)).toBe("own:1");
  });

  it("rejects unknown placeholders", () => {
    expect(() => checkImageTemplate(DEFAULT_IMAGE_TEMPLATE)).not.toThrow();
    expect(() => imageName({ instance_id: "a__b-1" }, "x/{repo}:latest")).toThrow(
      'image template "x/{repo}:latest": unknown placeholder {repo} (use {instance_id} or {id_docker_compatible})',
    );
  });
});
