# RSpec examples that pass, fail, error and are pending (run with --format json, then through jq).
RSpec.describe "Calculator" do
  it "adds" do
    expect(1 + 1).to eq(2)
  end

  it "fails to subtract" do
    expect(3 - 1).to eq(1)
  end

  it "raises" do
    raise "boom"
  end

  it "is pending" do
    pending("not done")
    expect(1).to eq(2)
  end

  xit "is skipped"

  context "with ünïcode - and a dash" do
    it "works - really" do
      expect(true).to be(true)
    end
  end
end
